"""Peer contenders built the same way for every kernel: JAX (jit of grad),
PyTorch (torch.autograd.grad), autograd, each on its own arrays made once
outside the timed call, as their users hold them."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from benchmarks import peers
from benchmarks.harness import Contender


def jax_contender(tool: str, f: Callable, args: Sequence[object], argnums: int | tuple[int, ...] = 0,
                  note: str = "", jit: bool = True) -> Contender | None:
    jax = peers.get("jax")
    if jax is None:
        return None
    jargs = [jax.numpy.asarray(a) if isinstance(a, np.ndarray) else a for a in args]
    g = jax.grad(f, argnums=argnums)
    p = f
    if jit:
        g, p = jax.jit(g), jax.jit(f)
    block = jax.block_until_ready
    return Contender(tool, lambda: block(g(*jargs)), lambda: block(p(*jargs)), note=note,
                     compiles=jit, extra={"idiom": "jax.jit(jax.grad(f))" if jit else "jax.grad(f), no jit"})


def torch_contender(tool: str, f: Callable, args: Sequence[object], argnums: int | tuple[int, ...] = 0,
                    note: str = "", clone_inputs: bool = False) -> Contender | None:
    torch = peers.get("torch")
    if torch is None:
        return None
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    targs = []
    for k, a in enumerate(args):
        if isinstance(a, np.ndarray):
            t = torch.from_numpy(np.array(a))
            if k in nums:
                t.requires_grad_(True)
            targs.append(t)
        else:
            targs.append(torch.tensor(a, requires_grad=True) if k in nums else a)
    wrt = [targs[k] for k in nums]
    single = isinstance(argnums, int)

    def grad() -> object:
        out = torch.autograd.grad(f(*targs), wrt)
        return out[0] if single else out

    def primal() -> object:
        with torch.no_grad():
            return f(*targs)

    return Contender(tool, grad, primal, note=note, extra={"idiom": "torch.autograd.grad(f(x), x)"})


def autograd_contender(tool: str, f: Callable, args: Sequence[object],
                       argnums: int | tuple[int, ...] = 0, note: str = "") -> Contender | None:
    ag = peers.get("autograd")
    if ag is None:
        return None
    g = ag.grad(f, argnums)
    return Contender(tool, lambda: g(*args), lambda: f(*args), traced=True, note=note,
                     extra={"idiom": "autograd.grad(f)"})


def keep(*cs: Contender | None) -> list[Contender]:
    return [c for c in cs if c is not None]
