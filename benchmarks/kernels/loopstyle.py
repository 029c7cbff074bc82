"""Loop-style peers: the kernel's Python function (scalar loops, `x[i]`)
run as-is on JAX, PyTorch and autograd arrays, next to ours at the same
sizes. Tape-based AD records every scalar operation, and the backward pass
of each `x[i]` materialises a dense length-n gradient: O(n^2) time. Sizes
grow until the next one is predicted (cost ~ n^2 from the last) to exceed
the cap (20 s; --quick: 3 s, and JAX, whose loop style compiles for
seconds even at n = 100, and autograd are left out)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from benchmarks import ours, peers
from benchmarks.harness import (OPTIONS, Contender, Row, check, compare, first_call, log,
                                peak_rss, size_label)


def _contender(peer: str, f: Callable, args: Sequence[object], argnums: int) -> Contender | None:
    if peer.startswith("jax"):
        jax = peers.get("jax")
        if jax is None:
            return None
        jargs = [jax.numpy.asarray(a) if isinstance(a, np.ndarray) else a for a in args]
        g = jax.grad(f, argnums=argnums)
        if peer == "jax jit":
            g = jax.jit(g)
        return Contender(f"{peer} (Python loop)", lambda: jax.block_until_ready(g(*jargs)),
                         compiles=True,
                         extra={"idiom": "jax.jit(jax.grad(f)) on the loop (unrolled when traced)"
                                if peer == "jax jit" else "jax.grad(f) on the loop, eager"})
    if peer == "torch":
        torch = peers.get("torch")
        if torch is None:
            return None
        targs = [torch.from_numpy(np.array(a)) if isinstance(a, np.ndarray) else a for a in args]
        targs[argnums] = targs[argnums].requires_grad_(True) if hasattr(targs[argnums], "requires_grad_") \
            else torch.tensor(targs[argnums], requires_grad=True)
        wrt = targs[argnums]
        return Contender("torch (Python loop)", lambda: torch.autograd.grad(f(*targs), wrt)[0],
                         extra={"idiom": "torch.autograd.grad(f(x), x) on the loop"})
    if peer == "autograd":
        ag = peers.get("autograd")
        if ag is None:
            return None
        g = ag.grad(f, argnums)
        return Contender("autograd (Python loop)", lambda: g(*args), traced=True,
                         extra={"idiom": "autograd.grad(f) on the loop"})
    raise ValueError(peer)


def run(section: str, key: str, pyfunc: Callable, make_args: Callable[[int], list],
        sizes: Sequence[int], comp: ours.Compiled | None, argnums: int = 0,
        fns: dict[str, Callable] | None = None, skip: dict[str, str] | None = None) -> list[Row]:
    """`fns` may give a peer its own loop-style function (in-place kernels);
    `skip`: peers that cannot run this kernel's loop style, and why."""
    fns = fns or {}
    skip = skip or {}
    cap = OPTIONS.loop_cap_s if not OPTIONS.quick else 3.0
    which = ["torch"] if OPTIONS.quick else ["torch", "autograd", "jax jit", "jax"]
    rows: list[Row] = []
    last: dict[str, tuple[int, float, float]] = {}  # n, first call, one gradient
    stopped: dict[str, str] = {}
    history: dict[str, list[tuple[int, float]]] = {}
    for n in sizes:
        args = make_args(n)
        ref = None
        if comp is not None:
            ref = ours.reference(comp, _copy(args))
            if len(ref) == 1:
                ref = ref[0]
            mine = _copy(args)
            t_ours = compare({"g": lambda: comp.grad(*mine)}, repeats=3)["g"]
            rows.append(Row(section, key, size_label(n), "adpasses", n, grad_s=t_ours, rel_err=0.0,
                            ok=True, note="beside the loop-style peers", extra={"loop_style": True}))
        for peer in which:
            tool = f"{peer} (Python loop)"
            if peer in stopped:
                continue
            if peer in skip:
                stopped[peer] = skip[peer]
                rows.append(Row(section, key, size_label(n), tool, n, note=f"not run: {skip[peer]}",
                                extra={"loop_style": True}))
                continue
            if peer in last:
                ln, lfirst, lgrad = last[peer]
                r = n / ln
                p = _exponent(history.get(peer, []))
                # compile ~ n; a gradient ~ n^p, p fitted on the last two sizes (2 if unknown)
                predicted = lfirst * r + 4 * lgrad * r**p
                if predicted > cap:
                    stopped[peer] = (f"n={n} predicted {predicted:.0f} s (> {cap:.0f} s cap, "
                                     f"cost ~ n^{p:.1f})")
                    rows.append(Row(section, key, size_label(n), tool, n,
                                    note=f"skipped: {stopped[peer]}", extra={"loop_style": True}))
                    continue
            f = fns.get(peer.split()[0], pyfunc)
            c = _contender(peer, f, _copy(args), argnums)
            if c is None:
                continue
            log(f"  {key} loop style {tool} {size_label(n)}")
            row = Row(section, key, size_label(n), tool, n, note="loop style", extra=dict(c.extra))
            row.extra["loop_style"] = True
            t_first, out = first_call(c.grad)
            if ref is not None:
                check(row, out, ref)
            if t_first > cap:
                row.grad_s = t_first
                row.note += "; one call timed (first call, compile included)"
            else:
                row.grad_s = compare({"g": c.grad}, repeats=3)["g"]
                if c.compiles:
                    row.compile_s = max(0.0, t_first - row.grad_s)
                row.peak_rss = peak_rss(c.grad)
            rows.append(row)
            last[peer] = (n, t_first, row.grad_s)
            history.setdefault(peer, []).append((n, row.grad_s))
    return rows


def _copy(args: Sequence[object]) -> list:
    return [a.copy() if isinstance(a, np.ndarray) else a for a in args]


def _exponent(points: list[tuple[int, float]]) -> float:
    """Growth exponent from the last two (n, seconds), clamped to [1, 2]."""
    import math

    if len(points) < 2:
        return 2.0
    (n1, t1), (n2, t2) = points[-2], points[-1]
    if t1 <= 0 or t2 <= 0 or n2 == n1:
        return 2.0
    return min(2.0, max(1.0, math.log(t2 / t1) / math.log(n2 / n1)))
