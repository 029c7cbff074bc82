"""adpasses under test: the Python API path, the raw compiled path, compile
times, taped bytes and allocations, and gradients built with non-default
reverse options (cache policy `tape-all`, activity analysis off).

Two paths are timed side by side:
- API: `adpasses.jit(f)(*args)` and `adpasses.grad(f, argnums)(*args)`
  (signature dispatch, overlap check, zeroed shadows, compiled call);
- raw: the module built by `adpasses.frontend.build_module`, arrays marked
  `ad.noalias` (what the API compiles when no arrays overlap),
  differentiated by `adpasses.transforms.reverse_pass.differentiate`,
  compiled by `adpasses.native.llvm_jit.compile_module`; the callables of the
  compiled module are called directly with preallocated shadows. This is
  the compiled code plus one CPython builtin call (the entry shim).
Only these documented entry points are used, so the suite does not depend
on the API's internals.
"""

from __future__ import annotations

import inspect as pyinspect
import time
import types
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

import adpasses
from adpasses.native import runtime
from benchmarks import harness
from benchmarks.harness import Row

_fresh = 0


def fresh_copy(pyfunc: types.FunctionType) -> types.FunctionType:
    """The same Python function under a new name, so that its compiled
    module has new symbols and compile_module's in-memory cache cannot
    answer for it: the compile time measured is a cold compile."""
    global _fresh
    _fresh += 1
    name = f"{pyfunc.__name__}_b{_fresh}"
    f = types.FunctionType(pyfunc.__code__, pyfunc.__globals__, name, pyfunc.__defaults__,
                           pyfunc.__closure__)
    f.__qualname__ = name
    return f


# -- building modules through the documented entry points -----------------------------------


def build(pyfunc: types.FunctionType, args: Sequence[object], noalias: bool = True):  # type: ignore[no-untyped-def]
    """(module, name, func op) of `pyfunc` for these arguments."""
    from xdsl.dialects import func
    from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, UnitAttr

    from adpasses.frontend import arg_type, build_module

    params = list(pyinspect.signature(pyfunc).parameters)
    types_ = [arg_type(a, k, params[k]) for k, a in enumerate(args)]
    module, name = build_module(pyfunc, types_)
    f = next(op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == name)
    if noalias:
        f.arg_attrs = ArrayAttr([
            DictionaryAttr({"ad.noalias": UnitAttr()} if isinstance(a, np.ndarray) else {})
            for a in args
        ])
    return module, name, f


def written(f) -> set[int]:  # type: ignore[no-untyped-def]
    """Positions of the array parameters the function may write."""
    try:
        from adpasses.native.pyentry import written_parameters
    except ImportError:
        return set()
    return set(written_parameters(f))


def activities(args: Sequence[object], argnums: Sequence[int], writes: set[int]) -> tuple[str, ...]:
    """adpasses.grad's activities: dup for differentiated arrays and for
    float arrays the function writes, active for floats, const else."""
    acts = []
    for k, a in enumerate(args):
        if k in argnums:
            acts.append("dup" if isinstance(a, np.ndarray) else "active")
        elif isinstance(a, np.ndarray) and k in writes and a.dtype.kind == "f":
            acts.append("dup")
        else:
            acts.append("const")
    return tuple(acts)


def shadows_for(args: Sequence[object], acts: Sequence[str]) -> dict[int, np.ndarray]:
    return {k: np.zeros_like(a) for k, (a, act) in enumerate(zip(args, acts))
            if act in ("dup", "dupnoneed")}


def raw_args(args: Sequence[object], acts: Sequence[str], shadows: dict[int, np.ndarray],
             n_seeds: int = 1) -> list[object]:
    out: list[object] = []
    for k, a in enumerate(args):
        out.append(a)
        if k in shadows:
            out.append(shadows[k])
    return out + [1.0] * n_seeds


def gradient_of(out: object, argnums: Sequence[int], acts: Sequence[str],
                shadows: dict[int, np.ndarray]) -> list[object]:
    """The gradient parts (per argnum) from a raw call's results and shadows."""
    outs = list(out) if isinstance(out, tuple) else ([] if out is None else [out])
    active = iter(outs)
    return [shadows[k].copy() if k in shadows else next(active) for k in argnums]


@dataclass
class Variant:
    """One compiled gradient (raw path)."""

    call: Callable
    acts: tuple[str, ...]
    argnums: tuple[int, ...]
    taped_bytes: int | None
    name: str
    module: object
    llvm_ir: str
    lower_s: float | None = None
    llvm_s: float | None = None
    report: object = None
    primal: Callable | None = None    # the primal, compiled in the same module

    def closure(self, args: Sequence[object]) -> tuple[Callable[[], object], dict[int, np.ndarray]]:
        shadows = shadows_for(args, self.acts)
        call_args = raw_args(args, self.acts, shadows)
        call = self.call
        return (lambda: call(*call_args)), shadows

    def gradient(self, args: Sequence[object]) -> list[object]:
        shadows = shadows_for(args, self.acts)
        out = self.call(*raw_args(args, self.acts, shadows))
        return gradient_of(out, self.argnums, self.acts, shadows)


def build_variant(pyfunc: types.FunctionType, args: Sequence[object], argnums: Sequence[int], *,
                  cache_policy: str = "minimal", activity: bool = True, boundscheck: bool = True,
                  acts: Sequence[str] | None = None) -> Variant:
    """differentiate(build_module(f), ...) with these ReverseOptions, noalias
    arguments, compiled by compile_module."""
    from adpasses.native.llvm_jit import compile_module
    from adpasses.transforms.reverse_pass import ReverseOptions, differentiate

    module, name, f = build(pyfunc, args)
    if acts is None:
        acts = activities(args, argnums, written(f))
    g = differentiate(module, name, list(acts), ["active"],
                      options=ReverseOptions(cache_policy=cache_policy, activity=activity,
                                             simplify=False))
    compiled = compile_module(module, boundscheck=boundscheck)
    report = g.cache_report.bind(list(args))
    tb = report.taped_bytes
    times = getattr(compiled, "times", None)
    return Variant(compiled[g.name], tuple(acts), tuple(argnums), tb if isinstance(tb, int) else None,
                   g.name, module, compiled.llvm_ir,
                   getattr(times, "lower_s", None), getattr(times, "llvm_s", None), report,
                   compiled[name])


def raw_primal(pyfunc: types.FunctionType, args: Sequence[object], boundscheck: bool = True) -> Callable:
    from adpasses.native.llvm_jit import compile_module

    module, name, _ = build(pyfunc, args)
    return compile_module(module, boundscheck=boundscheck)[name]


# -- one kernel, both paths ----------------------------------------------------------------------


@dataclass
class Compiled:
    """Our primal and gradient for one signature, on both paths."""

    jf: object
    grad: Callable
    argnums: tuple[int, ...]
    raw_primal: Callable
    raw: Variant
    compile_primal_s: float
    compile_grad_s: float
    first_allocations: int = 0        # heap allocations of the first gradient call
    first_alloc_bytes: int = 0
    extra: dict = field(default_factory=dict)

    def raw_grad_closure(self, args: Sequence[object]) -> Callable[[], object]:
        return self.raw.closure(args)[0]


def compile_ours(pyfunc: types.FunctionType, args: Sequence[object],
                 argnums: int | tuple[int, ...] = 0,
                 copy_args: Callable[[], Sequence[object]] | None = None) -> Compiled:
    """adpasses.jit + first primal call, then adpasses.grad + first gradient
    call, each timed (wall) minus a steady-state call: the compile times of
    issue 4. A fresh copy of the function is compiled, so these are cold."""
    fresh = fresh_copy(pyfunc)
    jf = adpasses.jit(fresh)
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    get = copy_args or (lambda: args)
    a = get()
    t_first, _ = harness.first_call(lambda: jf(*a))
    a = get()
    start = time.perf_counter()
    jf(*a)
    t_steady = time.perf_counter() - start
    g = adpasses.grad(jf, nums if len(nums) > 1 else nums[0])
    a = get()
    runtime.reset_stats()
    g_first, _ = harness.first_call(lambda: g(*a))
    first_alloc = runtime.stats()
    a = get()
    start = time.perf_counter()
    g(*a)
    g_steady = time.perf_counter() - start
    a = get()
    variant = build_variant(fresh, a, nums)
    return Compiled(jf, g, nums, variant.primal, variant,
                    max(0.0, t_first - t_steady), max(0.0, g_first - g_steady),
                    first_alloc["allocations"], first_alloc["bytes"])


def contenders(comp: Compiled, args: Sequence[object],
               primal_args: Sequence[object] | None = None) -> list[harness.Contender]:
    """`adpasses` (the API: adpasses.grad(f)(*args)) and `adpasses raw`
    (the compiled gradient called directly, preallocated shadows)."""
    pargs = primal_args if primal_args is not None else args
    jf, g, rp = comp.jf, comp.grad, comp.raw_primal
    v = comp.raw
    shadows = shadows_for(args, v.acts)
    call_args = raw_args(args, v.acts, shadows)
    rg = v.call
    return [
        harness.Contender("adpasses", lambda: g(*args), lambda: jf(*pargs), traced=True,
                          extra={"path": "adpasses.jit / adpasses.grad"}),
        harness.Contender("adpasses raw", lambda: rg(*call_args), lambda: rp(*pargs),
                          note="compiled entry points called directly, preallocated shadows",
                          extract=lambda out: gradient_of(out, v.argnums, v.acts, shadows),
                          extra={"path": "build_module + differentiate + compile_module"}),
    ]


def reference(comp: Compiled, args: Sequence[object]) -> list[object]:
    ref = comp.grad(*args)
    return [np.array(r) if isinstance(r, np.ndarray) else r
            for r in (list(ref) if isinstance(ref, tuple) else [ref])]


def taped_bytes(f: object, args: Sequence[object], argnums: int | tuple[int, ...] = 0) -> int | None:
    tb = adpasses.cache_report(f, *args, argnums=argnums).taped_bytes
    return tb if isinstance(tb, int) else None


def allocations(fn: Callable[[], object]) -> tuple[int, int]:
    """Heap allocations and bytes by generated code during one call."""
    runtime.reset_stats()
    fn()
    s = runtime.stats()
    return s["allocations"], s["bytes"]


def annotate(rows: list[Row], comp: Compiled, args: Sequence[object],
             argnums: int | tuple[int, ...] = 0, taped: bool = True) -> None:
    """Our rows: compile times, taped bytes, heap allocations per call."""
    tb = taped_bytes(comp.jf, args, argnums) if taped else None
    for row in rows:
        if row.tool == "adpasses":
            row.compile_s = comp.compile_primal_s + comp.compile_grad_s
            row.extra.update({
                "compile_primal_s": comp.compile_primal_s, "compile_grad_s": comp.compile_grad_s,
                "grad_lower_s": comp.raw.lower_s, "grad_llvm_s": comp.raw.llvm_s,
                "first_call_allocations": comp.first_allocations,
                "first_call_alloc_bytes": comp.first_alloc_bytes,
            })
            row.allocations, row.extra["allocated_bytes"] = allocations(lambda: comp.grad(*args))
            row.taped_bytes = tb
        elif row.tool == "adpasses raw":
            row.allocations, row.extra["allocated_bytes"] = allocations(comp.raw_grad_closure(args))
            row.taped_bytes = tb  # same reverse options, same plan
