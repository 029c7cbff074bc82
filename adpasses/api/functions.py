"""The Python API: `jit`, `grad`, `value_and_grad`, `autodiff` (with
`Active`, `Const`, `Duplicated`, `DuplicatedNoNeed`), `inspect`,
`cache_report`. See docs/api.md.

Every compiled variant is cached per signature (argument kinds, dtypes,
ranks, C-contiguity), per activity and per aliasing case: when no two arrays
of a call overlap in memory, a version whose memref arguments carry
`ad.noalias` is used (the reverse pass may reload instead of taping, LLVM
vectorises); when some do, the conservative version.
"""

from __future__ import annotations

import inspect as pyinspect
import numbers
import time
import types
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import numpy as np

from adpasses.api import shadows
from adpasses.api.compile_log import CompileRecord, emit, module_stages, signature_text
from adpasses.api.aliasing import check_autodiff_aliasing, check_shadow_layout, check_written_self_overlap, grad_call
from adpasses.native.arguments import array_subclass_problem, is_honoured_array, plain_arguments
from adpasses.api.autodiff_call import MISS, fast_key, make_fast_path
from adpasses.core.compile_locks import load_compiler, load_runtime, once
from adpasses.core.compile_thread import compile_entry
from adpasses.core.diagnostics import CompileError, for_user
from adpasses.frontend.binding import binder, has_plain_parameters
from adpasses.frontend.signature import ArrayArg, arg_type, signature_key
from adpasses.api.gradcall import LoadedGradient, GradCallable, grad_activity, install_dispatch, normalize_argnums
from adpasses.api.markers import Active, Const, Duplicated, DuplicatedNoNeed, split_markers  # noqa: F401 (adpasses.Active, ... come from here)
from adpasses.core.options import check_argnums, check_flag

if TYPE_CHECKING:
    from adpasses.api.disk_cache import DiskCache

# -- jit ------------------------------------------------------------------------------


class JitFunction:
    """A Python function compiled on its first call with each signature."""

    def __init__(self, fn: types.FunctionType, boundscheck: bool = True, fastmath: bool = False,
                 cache: bool = False, tape_limit: "int | RevolveBudget | None" = None, parallel: bool = False,
                 strong_zero: bool = False):
        if isinstance(fn, JitFunction):
            raise TypeError(f"adpasses.jit: {fn.__name__} is already an adpasses.jit function; "
                            "use it as it is (or jit its .py_func with other options)")
        if not isinstance(fn, types.FunctionType):
            raise TypeError(f"adpasses.jit needs a Python function, got {type(fn).__name__}")
        self.__adpasses_function__ = fn  # how the frontend recognises jitted callees
        self.py_func = fn
        self.boundscheck = boundscheck
        self.fastmath = fastmath
        self.cache = cache
        self.parallel = parallel
        """Every top-level loop may run on several threads when its iterations
        are proven independent (docs/parallel.md); prange loops always may."""
        self.strong_zero = strong_zero
        """Gradients are built with Enzyme's `strong_zero` (a zero seed gives
        zero adjoints even through inf or nan partials): `grad(f, strong_zero=True)`."""
        self.tape_limit = tape_limit
        """Bytes: gradients checkpoint time loops whose tape may exceed it
        (`ad-checkpoint-loops`; docs/cache.md, "Checkpointing"); None: never."""
        # The disk cache (adpasses.api.disk_cache), made on first use.
        self._disk: DiskCache | None = None
        if cache:
            from adpasses.native.object_cache import enable_runtime_cache

            enable_runtime_cache()  # the process's dispatch code, too
        self.__name__ = fn.__name__
        self.__qualname__ = fn.__qualname__
        self.__doc__ = fn.__doc__
        self.__wrapped__ = fn
        self._signature = pyinspect.signature(fn)
        self._params = list(self._signature.parameters)
        self._plain = has_plain_parameters(fn)
        # Binds keywords and defaults with CPython's own rules and messages.
        self._binder = binder(fn) if self._plain else None
        # Compiled callables hold their machine code (llvm_jit.MachineCode):
        # it is freed with the last cache, fast path or caller holding one.
        self._primal: dict[tuple, Callable] = {}   # (signature_key, noalias) -> compiled primal
        self._dispatch = None                       # DispatchTable: signature code -> compiled primal
        self._gradients: dict[tuple, LoadedGradient] = {}
        self._built: dict[tuple, tuple] = {}       # signature_key -> (written arrays, result activities)
        self._spare: dict[tuple, tuple] = {}       # signature_key -> a built, unused (module, name)
        self._grad_functions: dict[tuple, GradCallable] = {}  # (argnums, with_value) -> grad(f)
        self._autodiff: dict[tuple, LoadedGradient] = {}    # (code, activity, ...) -> gradient
        self._autodiff_fast: dict[tuple, Callable] = {}       # fast_key -> autodiff fast path
        self._jacobian_functions: dict[tuple, object] = {}   # (kind, argnums) -> jacrev(f) ... (api/jacobians)
        self._jacobian_plans: dict[tuple, object] = {}       # (code, activity, ...) -> compiled driver
        self._frontend_s: dict[tuple, float] = {}  # signature_key -> seconds of the last frontend run
        self.compilations: list[CompileRecord] = []  # what each compilation cost (compile_log)

    def __repr__(self) -> str:
        return f"<adpasses.jit {self.py_func.__module__}.{self.py_func.__qualname__}>"

    def __reduce__(self) -> tuple:
        """Pickled by reference: module, qualified name and options (the
        compiled code is not sent; the other side finds the function by
        importing its module, and compiles or loads it from the disk cache;
        docs/deployment.md)."""
        return (rebuild_jit, (*pickle_reference(self.py_func, "adpasses.jit function"),
                              self.boundscheck, self.fastmath, self.cache, self.tape_limit, self.parallel))

    def __call__(self, *args: object, **kwargs: object) -> object:
        # Replaced, once something is compiled, by a dispatch builtin that
        # calls the compiled function of the arguments' signature directly
        # (see install_dispatch); this method is its fallback, and the path
        # of every call with keywords or omitted defaults.
        try:
            return self._slow_call(self.bind(args, kwargs))
        except CompileError as err:
            raise for_user(err)  # the user's line and the message, not the compiler's frames

    def bind(self, args: tuple, kwargs: dict | None = None) -> tuple:
        """All parameters, positionally: keywords placed, defaults filled in
        (the compiled code takes every parameter)."""
        load_runtime()  # once: what calls import, under the fork-safe import lock
        if not self._plain:
            self._reject_parameters()
        if not kwargs and len(args) == len(self._params):
            return args
        # A bad call raises the TypeError calling the Python function would
        # (unexpected keyword, missing or extra arguments, a duplicate).
        return self._binder(*args, **(kwargs or {}))

    def _slow_call(self, args: tuple) -> object:
        # Numpy scalars converted and array classes checked before anything
        # reads an array (adpasses.native.arguments).
        args = plain_arguments(self.__name__, self._params, args, keep_numpy=True)
        key = signature_key(args)
        # Arrays the function only reads may alias freely; written ones may
        # use the `ad.noalias` version only when no two arrays overlap.
        checks_overlap = sum(isinstance(a, np.ndarray) for a in args) > 1 and bool(self.written_arrays(args))
        noalias = not checks_overlap or not shadows.arrays_overlap(*args)
        call = self._primal.get((key, noalias))
        if call is None:
            # Compiled once per key: concurrent first calls wait for it.
            call = once(self._primal, (key, noalias), lambda: self._compile_primal(args, noalias))
        code = shadows.signature_code(*args)
        if code and noalias:
            target = _overlap_guard(call, args, self._slow_call) if checks_overlap else call
            install_dispatch(self, self._slow_call_varargs).add(code, target)
        return call(*args)

    def _slow_call_varargs(self, *args: object, **kwargs: object) -> object:
        try:
            return self._slow_call(self.bind(args, kwargs))
        except CompileError as err:
            raise for_user(err)  # the user's line and the message, not the compiler's frames

    # -- compilation ----------------------------------------------------------

    def _reject_parameters(self) -> None:
        """The frontend's CompileError (at the `def` line) for *args,
        **kwargs, keyword-only or positional-only parameters."""
        from adpasses.frontend import build_module

        build_module(self.py_func, [])
        raise AssertionError("the frontend accepted a signature with special parameters")

    def arg_types(self, args: Sequence[object]) -> list:
        if not self._plain:
            self._reject_parameters()
        if len(args) != len(self._params):
            n = len(self._params)
            raise TypeError(f"{self.__name__}() takes {n} positional argument{'s' if n != 1 else ''} "
                            f"but {len(args)} {'was' if len(args) == 1 else 'were'} given")
        return [arg_type(a, k, self._params[k]) for k, a in enumerate(args)]

    def build(self, args: Sequence[object], noalias: bool = False):  # type: ignore[no-untyped-def]
        """(module, function name) of the primal for these arguments."""
        # The dispatch builtins, if not made yet, are compiled by LLVM on
        # another thread while this one imports the compiler (cold start).
        shadows.prepare_dispatch()
        load_compiler()  # before the first lazy import: see compile_locks (fork)
        from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, UnitAttr

        from adpasses.dialects.ad import NOALIAS_ATTR
        from adpasses.frontend import build_module

        types_ = self.arg_types(args)
        key = signature_key(tuple(args))
        spare = self._spare.pop(key, None)
        if spare is not None:
            module, name = spare
        else:
            start = time.perf_counter()
            module, name = build_module(self.py_func, types_)
            _resolve_derivative_requests(module, self.reverse_options())
            self._frontend_s[key] = time.perf_counter() - start
        f = function_named(module, name)
        if self.parallel:
            from adpasses.transforms.parallelize import mark_parallel

            mark_parallel(f)
        if noalias:
            f.arg_attrs = ArrayAttr([
                DictionaryAttr({NOALIAS_ATTR: UnitAttr()} if isinstance(t, ArrayArg) else {})
                for t in types_
            ])
            # A prange loop that cannot run in parallel is an error at its
            # line (with arrays that share memory, noalias=False, it runs
            # serially: docs/parallel.md).
            from adpasses.transforms.parallelize import check_prange_loops

            check_prange_loops(f)
            # In-place updates that cannot overlap now (distinct arrays):
            # no run-time test, no temporary (frontend/overlap.py).
            from adpasses.transforms.overlap_checks import fold_overlap_checks

            fold_overlap_checks(f)
        self._remember(args, f)
        return module, name

    def _remember(self, args: Sequence[object], f) -> None:  # type: ignore[no-untyped-def]
        from xdsl.dialects.builtin import Float32Type, Float64Type

        from adpasses.native.pyentry import written_parameters

        key = signature_key(tuple(args))
        if key not in self._built:
            from xdsl.dialects.builtin import MemRefType

            outputs = f.function_type.outputs.data
            returns = tuple("active" if isinstance(t, (Float64Type, Float32Type)) else "const"
                            for t in outputs)
            kinds = tuple("float" if isinstance(t, (Float64Type, Float32Type)) else
                          "array" if isinstance(t, MemRefType) else "other" for t in outputs)
            # Per result: whether it is an array of floats (one with a tangent in forward mode).
            floats = tuple(isinstance(t, MemRefType) and isinstance(t.element_type, (Float64Type, Float32Type))
                           for t in outputs)
            self._built[key] = (written_parameters(f), returns, kinds, floats)
            if self.cache:
                self.disk.write("facts", self._disk_signature(args),
                                {"written": sorted(self._built[key][0]), "returns": list(returns),
                                 "kinds": list(kinds), "float_arrays": list(floats)})

    def _facts(self, args: Sequence[object]) -> tuple:
        key = signature_key(tuple(args))
        if key not in self._built:
            entry = self.disk.read("facts", self._disk_signature(args)) if self.cache else None
            if entry is not None and "float_arrays" in entry:
                self._built[key] = (set(entry["written"]), tuple(entry["returns"]), tuple(entry["kinds"]),
                                    tuple(entry["float_arrays"]))
            else:
                # Keep the module for the compilation that usually follows.
                self._spare[key] = self.build(args)
        return self._built[key]

    # -- the disk cache (jit(cache=True)) ---------------------------------------

    @property
    def disk(self) -> DiskCache:
        if self._disk is None:
            from adpasses.api.disk_cache import DiskCache

            self._disk = DiskCache(self.py_func, ("boundscheck", self.boundscheck,
                                                  "fastmath", self.fastmath)
                                   + (("parallel", True) if self.parallel else ()))
        return self._disk

    def _disk_signature(self, args: Sequence[object]) -> tuple:
        return tuple(repr(t) for t in self.arg_types(args))

    def written_arrays(self, args: Sequence[object]) -> set[int]:
        """Positions of the array arguments the function may write."""
        return self._facts(args)[0]

    def return_activity(self, args: Sequence[object]) -> tuple[str, ...]:
        """"active" for a float result, "const" for others; () if none."""
        return self._facts(args)[1]

    def result_kinds(self, args: Sequence[object]) -> tuple[str, ...]:
        """Per result: "float", "array" or "other" (int, bool)."""
        return self._facts(args)[2]

    def result_float_arrays(self, args: Sequence[object]) -> tuple[bool, ...]:
        """Per result: whether it is an array of floats."""
        return self._facts(args)[3]

    def _compile_primal(self, args: Sequence[object], noalias: bool) -> Callable:
        record = self._record("primal", args, ())
        parts = (self._disk_signature(args), noalias) if self.cache else ()
        if self.cache:
            hit = self.disk.load("primal", parts)
            if hit is not None:
                compiled, entry = hit
                self._loaded(record, compiled)
                return compiled[entry["name"]]
        load_compiler()  # before the first lazy import: see compile_locks (fork)
        from adpasses.native.llvm_jit import compile_module, stats

        module, name = self.build(args, noalias)
        record.stages["frontend"] = self._frontend_s.pop(signature_key(tuple(args)), 0.0)
        before = stats["compiled"]
        compiled = compile_module(module, boundscheck=self.boundscheck, fastmath=self.fastmath)
        self._compiled(record, compiled, before)
        if self.cache:
            self.disk.store("primal", parts, compiled, name=name)
        return compiled[name]

    # -- what compiling cost (adpasses.api.compile_log) ---------------------------

    def _record(self, kind: str, args: Sequence[object], activity: tuple[str, ...]) -> CompileRecord:
        return CompileRecord(self.__qualname__, kind, signature_text(self.arg_types(args)), activity,
                             disk_cache="miss" if self.cache else "off")

    def _loaded(self, record: CompileRecord, compiled) -> None:  # type: ignore[no-untyped-def]
        record.source, record.disk_cache = "disk", "hit"
        record.stages["load"] = compiled.times.codegen_s
        self.compilations.append(record)
        emit(record)

    def _compiled(self, record: CompileRecord, compiled, before: int) -> None:  # type: ignore[no-untyped-def]
        from adpasses.native.llvm_jit import stats

        record.source, stages = module_stages(compiled, before, stats["compiled"])
        record.stages.update(stages)
        self.compilations.append(record)
        emit(record)

    def gradient(self, args: Sequence[object], activity: tuple[str, ...], with_primal: bool,
                 noalias: bool, ret: tuple[str, ...] | None = None, width: int = 1,
                 private: frozenset[int] = frozenset(), zero: bool = False) -> LoadedGradient:
        """The compiled gradient for these activities (cached). `ret=None`:
        the function must return a float, which is active. `width`: vector
        reverse mode (`ad.autodiff {width = N}`: N shadows per dup argument,
        N seeds per active result, N derivatives per active argument).
        `private`: written arrays the gradient may copy itself, zero-filling
        their shadows (`ad-private-copies`; `LoadedGradient.private` says
        which it does: their caller passes them uncopied, with shadows of
        uninitialised memory). `zero`: the gradient may zero the other
        shadows itself when it has a loop (on the pool when it runs parallel
        loops, else serially with the GIL released:
        `private_copies.zero_shadows_inside`; `LoadedGradient.zeroed`)."""
        key = (signature_key(tuple(args)), activity, with_primal, noalias, ret)
        if width != 1:
            key += (width,)
        if private:
            key += (("private", tuple(sorted(private))),)
        if zero:
            key += ("zero",)
        g = self._gradients.get(key)
        if g is None:
            # Compiled once per key: concurrent first calls wait for it.
            g = once(self._gradients, key,
                     lambda: self._compile_gradient(args, activity, with_primal, noalias, ret, width, private,
                                                    zero))
        return g

    def autodiff_gradient(self, values: Sequence[object], activity: tuple[str, ...], with_primal: bool,
                          noalias: bool, width: int = 1) -> LoadedGradient:
        """The gradient for an autodiff call (every float result active),
        found by the call's signature code when it has one."""
        code = shadows.signature_code(*values)
        key = (code, activity, with_primal, noalias) + ((width,) if width != 1 else ())
        g = self._autodiff.get(key) if code else None
        if g is None:
            g = self.gradient(values, activity, with_primal, noalias, self.return_activity(values), width)
            if code:
                self._autodiff[key] = g
        return g

    def _compile_gradient(self, args: Sequence[object], activity: tuple[str, ...], with_primal: bool,
                          noalias: bool, ret: tuple[str, ...] | None, width: int = 1,
                          private: frozenset[int] = frozenset(), zero: bool = False) -> LoadedGradient:
        if ret is None:
            ret = self.scalar_return(args)
        record = self._record("gradient", args, activity)
        parts = (self._disk_signature(args), activity, with_primal, noalias, ret) if self.cache else ()
        if self.cache and width != 1:
            parts += (("width", width),)
        if self.cache and self.tape_limit is not None:
            parts += (("tape_limit", self.tape_limit),)
        if self.cache and self.strong_zero:
            parts += (("strong_zero", True),)
        if self.cache and private:
            parts += (("private", tuple(sorted(private))),)
        if self.cache and zero:
            parts += (("zero", True),)
        if self.cache:
            hit = self.disk.load("gradient", parts)
            if hit is not None:
                compiled, entry = hit
                self._loaded(record, compiled)
                # Loaded: no IR and no cache report object (inspect/cache_report
                # rebuild them); the activity report's text is kept.
                return LoadedGradient(compiled[entry["name"]], activity, ret, with_primal, None,
                                      entry["name"], None, entry["activity"], compiled,
                                      frozenset(entry.get("private", ())), frozenset(entry.get("zeroed", ())))
        load_compiler()  # before the first lazy import: see compile_locks (fork)
        from adpasses.native.llvm_jit import compile_module, stats
        from adpasses.transforms.reverse_pass import ReverseOptions, differentiate

        module, name = self.build(args, noalias)
        record.stages["frontend"] = self._frontend_s.pop(signature_key(tuple(args)), 0.0)
        g = differentiate(module, name, list(activity), list(ret), with_primal=with_primal, width=width,
                          strong_zero=self.strong_zero, options=self.reverse_options(),
                          timings=record.stages)
        # Only the gradient is called: LLVM may drop the primal.
        function_named(module, name).sym_visibility = _private()
        copied = frozenset()
        if private and width == 1:
            from adpasses.transforms.private_copies import copy_inside

            copied = copy_inside(function_named(module, g.name), activity, private)
        zeroed = frozenset()
        if zero and width == 1:
            from adpasses.transforms.private_copies import zero_shadows_inside

            zeroed = zero_shadows_inside(function_named(module, g.name), activity, copied)
        before = stats["compiled"]
        compiled = compile_module(module, boundscheck=self.boundscheck, fastmath=self.fastmath)
        self._compiled(record, compiled, before)
        if self.cache:
            self.disk.store("gradient", parts, compiled, name=g.name, activity=g.activity_report,
                            private=sorted(copied), zeroed=sorted(zeroed))
        return LoadedGradient(compiled[g.name], activity, ret, with_primal, g.cache_report, g.name,
                                module, g.activity_report, compiled, copied, zeroed)

    def reverse_options(self):  # type: ignore[no-untyped-def]
        """The options of the reverse pipeline for this function's gradients."""
        from adpasses.transforms.reverse_pass import ReverseOptions

        budget = self.tape_limit
        if isinstance(budget, RevolveBudget):
            return ReverseOptions(simplify=False, tape_limit=-1 if budget.limit is None else budget.limit,
                                  checkpoint_schedule="revolve", snapshots=budget.snapshots or 0)
        if isinstance(budget, SqrtBudget):
            return ReverseOptions(simplify=False, tape_limit=budget.limit, checkpoint_schedule="sqrt")
        return ReverseOptions(simplify=False, tape_limit=-1 if budget is None else budget)

    def scalar_return(self, args: Sequence[object]) -> tuple[str, ...]:
        """("active",) if the function returns a float; else a TypeError
        pointing to autodiff."""
        ret = self.return_activity(args)
        if ret != ("active",):
            kinds = self.result_kinds(args)
            if "array" in kinds or len(kinds) > 1:
                what = "returns an array" if kinds == ("array",) else f"returns a tuple of {len(kinds)} values"
                raise TypeError(
                    f"{self.__name__}() {what}: grad needs a function returning a float; for array "
                    "or tuple results use adpasses.vjp(f)(*args), which returns (out, vjp_fn) with "
                    "vjp_fn(cotangent) giving the cotangents of the arguments, or adpasses.jacrev(f)")
            what = "returns nothing" if not ret else "does not return a float"
            raise TypeError(
                f"{self.__name__}() {what}: grad needs a function returning a float; to "
                "differentiate a function that writes an output array, use "
                "adpasses.autodiff(f, ..., Duplicated(out, seed_array))"
            )
        return ret


def _overlap_guard(call: Callable, args: tuple, slow: Callable) -> Callable:
    """`call(*args)` when no two of the array arguments overlap, else
    `slow(args)` (which picks the conservative version)."""
    params = [f"a{k}" for k in range(len(args))]
    arrays = [p for p, a in zip(params, args) if isinstance(a, np.ndarray)]
    source = (f"def guarded({', '.join(params)}):\n"
              f"    if overlap({', '.join(arrays)}):\n"
              f"        return slow(({', '.join(params)},))\n"
              f"    return call({', '.join(params)})\n")
    env = {"call": call, "slow": slow, "overlap": shadows.arrays_overlap}
    exec(compile(source, "<adpasses overlap guard>", "exec"), env)
    return env["guarded"]  # type: ignore[return-value]


def _resolve_derivative_requests(module, options) -> None:  # type: ignore[no-untyped-def]
    """`adpasses.jvp`, `grad`, `hessian`, ... called in compiled code left
    `ad.fwddiff` and `ad.autodiff` ops (frontend/derivatives.py,
    frontend/derivative_calls.py): replace them by calls of their tangent
    and gradient functions now, so that every later stage (the primal, a
    gradient of the caller, tangents of tangents) sees plain functions.
    As `ad-opt --forward`: tangents the gradients call first (reverse over
    forward), then the gradients (`ad-reverse` with the function's
    checkpointing options, `options`), then tangents of gradients (forward
    over reverse: hessian, hvp)."""
    from adpasses.dialects.ad import AutodiffOp, FwddiffOp

    kinds = {type(op) for op in module.walk() if isinstance(op, (AutodiffOp, FwddiffOp))}
    if not kinds:
        return
    from adpasses.core.context import compiler_context
    from adpasses.transforms.forward_pass import ForwardPass

    ctx = compiler_context()
    if AutodiffOp in kinds:
        from adpasses.transforms.reverse_pass import ReversePass

        ForwardPass(inner=True).apply(ctx, module)
        ReversePass(tape_limit=options.tape_limit, checkpoint_schedule=options.checkpoint_schedule,
                    snapshots=options.snapshots).apply(ctx, module)
    ForwardPass().apply(ctx, module)


def _private():  # type: ignore[no-untyped-def]
    from xdsl.dialects.builtin import StringAttr

    return StringAttr("private")


def function_named(module, name: str):  # type: ignore[no-untyped-def]
    from xdsl.dialects import func

    for op in module.ops:
        if isinstance(op, func.FuncOp) and op.sym_name.data == name:
            return op
    raise KeyError(name)


def jit(fn: types.FunctionType | None = None, *, boundscheck: bool = True,
        fastmath: bool = False, cache: bool = False, tape_limit: int | str | None = None,
        parallel: bool = False, schedule: str | None = None,
        snapshots: int | None = None):  # type: ignore[no-untyped-def]
    """`@jit` or `@jit(boundscheck=False, fastmath=True, cache=True)`.
    `parallel=True`: loops whose iterations are proven independent run on
    several threads (docs/parallel.md; `adpasses.prange` marks one loop).
    `cache=True`: compiled code is kept on disk and loaded by later
    processes (docs/deployment.md). `tape_limit` (bytes, or a string such
    as "32MB"): gradients checkpoint the time loops whose tape may exceed
    it; `schedule="revolve"` or `snapshots=S`: by the binomial schedule
    with S states (or as many as fit in the limit) instead of sqrt(steps)
    segments (docs/cache.md, "Checkpointing")."""
    boundscheck = check_flag(boundscheck, "boundscheck", "jit()")
    fastmath = check_flag(fastmath, "fastmath", "jit()")
    cache = check_flag(cache, "cache", "jit()")
    limit = parse_budget(tape_limit, schedule, snapshots, "tape_limit", "jit()")
    parallel = check_flag(parallel, "parallel", "jit()")
    if fn is None:
        return lambda f: _jit_of(f, boundscheck, fastmath, cache, limit, parallel)
    return _jit_of(fn, boundscheck, fastmath, cache, limit, parallel)


_UNITS = {"": 1, "b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9,
          "kib": 2**10, "mib": 2**20, "gib": 2**30}


@dataclass(frozen=True)
class RevolveBudget:
    """Loop checkpointing by the binomial schedule: `snapshots` states, or
    as many as fit in `limit` bytes (docs/cache.md, "Checkpointing")."""

    limit: int | None = None
    snapshots: int | None = None


@dataclass(frozen=True)
class SqrtBudget:
    """Loop checkpointing by sqrt(steps) segments whatever they hold
    (`schedule="sqrt"`); a plain byte count is the automatic choice."""

    limit: int


SCHEDULES = ("auto", "sqrt", "revolve")


def parse_budget(value: object, schedule: object, snapshots: object, name: str,
                 where: str) -> int | RevolveBudget | None:
    """The checkpointing budget of `name=value, schedule=, snapshots=`: None
    (no checkpointing), bytes (the automatic choice: no checkpointing, sqrt
    segments or revolve, whichever fits), a SqrtBudget or a RevolveBudget."""
    limit = parse_bytes(value, name, where)
    if schedule is not None and schedule not in SCHEDULES:
        raise ValueError(f"{where}: schedule must be 'auto', 'sqrt' or 'revolve', got {schedule!r}")
    if snapshots is not None:
        if isinstance(snapshots, bool) or not isinstance(snapshots, numbers.Integral):
            raise TypeError(f"{where}: snapshots must be an int (how many loop states revolve may hold), "
                            f"not {type(snapshots).__name__}")
        if snapshots < 1:
            raise ValueError(f"{where}: snapshots={snapshots} holds no state; revolve needs at least 1 "
                             "(the loop's initial state): give snapshots >= 1, or a byte budget "
                             f"({name}=...) to fit as many as it allows")
        if schedule in ("sqrt", "auto"):
            raise ValueError(f"{where}: snapshots= is revolve's budget; the {schedule} schedule takes {name}= "
                             "only (drop snapshots=, or use schedule='revolve')")
        return RevolveBudget(limit, int(snapshots))
    if schedule == "revolve":
        if limit is None:
            raise ValueError(f"{where}: schedule='revolve' needs a budget: snapshots=S (states held) "
                             f"or {name}=bytes")
        return RevolveBudget(limit, None)
    if schedule == "sqrt" and limit is not None:
        return SqrtBudget(limit)
    return limit


def parse_bytes(value: object, name: str, where: str) -> int | None:
    """A byte count: an int >= 0, or a string like "32MB", "8 MiB", "1e6"
    (kB, MB, GB: powers of 1000; KiB, MiB, GiB: of 1024); None for None."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise TypeError(f"{where}: {name} must be a number of bytes or a string like '32MB', not a bool")
    if isinstance(value, numbers.Integral):
        n = int(value)
    elif isinstance(value, str):
        import re

        m = re.fullmatch(r"\s*([0-9.eE+]+)\s*([a-zA-Z]*)\s*", value)
        unit = m.group(2).lower() if m else None
        try:
            number = float(m.group(1)) if m is not None else None  # "1.2.3", "+", "e": not numbers
        except ValueError:
            number = None
        if number is None or unit not in _UNITS:
            raise ValueError(f"{where}: {name}={value!r} is not a size; write bytes as an int or a "
                             "string like '32MB', '512KiB', '2GB'")
        n = MAX_BYTES if number * _UNITS[unit] >= MAX_BYTES else int(number * _UNITS[unit])
    else:
        raise TypeError(f"{where}: {name} must be a number of bytes or a string like '32MB', "
                        f"not {type(value).__name__}")
    if n < 0:
        raise ValueError(f"{where}: {name} must be at least 0 bytes, got {value!r}")
    # The compiled code compares the limit as a signed 64-bit count: a larger one (10**30, "1e99")
    # failed deep in the IR builder; no memory holds that many bytes, so it is that limit.
    return min(n, MAX_BYTES)


MAX_BYTES = 2**63 - 1
"""The largest byte limit: any larger one means the same (no address space holds more)."""


_JITS = "__adpasses_jits__"  # attribute of a Python function: its JitFunction per options


def pickle_reference(fn: types.FunctionType, what: str) -> tuple[str, str]:
    """(module, qualified name) of a function that another process can
    import; a PicklingError saying what to do for one it cannot."""
    import pickle

    module, qualname = fn.__module__, fn.__qualname__
    if "<locals>" in qualname or "<lambda>" in qualname:
        raise pickle.PicklingError(
            f"cannot pickle the {what} {qualname}: it is pickled by reference (module and name), and a "
            "function defined inside another function or a lambda has no name another process can "
            "import; define it at the top level of a module")
    return module, qualname


def find_by_name(module: str, qualname: str) -> object:
    import importlib

    obj: object = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


def rebuild_jit(module: str, qualname: str, boundscheck: bool, fastmath: bool, cache: bool,
                tape_limit: "int | RevolveBudget | None" = None, parallel: bool = False) -> JitFunction:
    """The JitFunction a pickle refers to: the function found by name in
    its module, jitted with the pickled options (the very object when the
    name is bound to it)."""
    obj = find_by_name(module, qualname)
    fn = getattr(obj, "__adpasses_function__", obj)
    if not isinstance(fn, types.FunctionType):
        import pickle

        raise pickle.UnpicklingError(f"{module}.{qualname} is a {type(obj).__name__} here, not the "
                                     "function that was pickled")
    return _jit_of(fn, boundscheck, fastmath, cache, tape_limit, parallel)


def _jit_of(fn: object, boundscheck: bool, fastmath: bool, cache: bool,
            tape_limit: "int | RevolveBudget | None" = None, parallel: bool = False,
            strong_zero: bool = False) -> JitFunction:
    """One JitFunction per (function, options): `jit(f)` twice shares the
    compiled code. Kept on the function itself, so that the compiled code
    goes when the function does (a global table would keep both alive)."""
    fn = _custom_function_body(fn)
    if not isinstance(fn, types.FunctionType):
        return JitFunction(fn, boundscheck, fastmath, cache, tape_limit, parallel,  # type: ignore[arg-type]  # its TypeError
                           strong_zero)
    options = (boundscheck, fastmath, cache) if tape_limit is None else (
        boundscheck, fastmath, cache, tape_limit)
    if parallel:
        options += ("parallel",)
    if strong_zero:
        options += ("strong_zero",)
    jits = fn.__dict__.get(_JITS)
    if jits is None:
        jits = fn.__dict__.setdefault(_JITS, {})
    jf = jits.get(options)
    if jf is None:
        if options == (True, False, False) and _AUTO_JIT in fn.__dict__:
            jf = fn.__dict__[_AUTO_JIT]  # what grad(f) of the plain function made
        # setdefault: threads jitting at once all get the same one.
        jf = jits.setdefault(options, jf or JitFunction(fn, boundscheck, fastmath, cache, tape_limit, parallel,
                                                         strong_zero))
    return jf


def _custom_function_body(f: object) -> object:
    """A custom_vjp/custom_jvp function (adpasses/api/custom_rules.py) is
    compiled as its Python function, which carries its rules."""
    from adpasses.api.custom_rules import CustomFunction

    return f.fun if isinstance(f, CustomFunction) else f


_AUTO_JIT = "__adpasses_jit__"  # attribute of a plain function passed to grad/autodiff: its JitFunction


def as_jit(f: object) -> JitFunction:
    """`f` itself if jitted; a plain Python function jitted (once)."""
    if isinstance(f, JitFunction):
        return f
    f = _custom_function_body(f)
    if isinstance(f, types.FunctionType):
        jf = f.__dict__.get(_AUTO_JIT)
        if jf is None:
            # The default options' JitFunction, shared with jit(f).
            jf = f.__dict__.setdefault(_AUTO_JIT, _jit_of(f, True, False, False))
        return jf
    hint = ""
    if type(f).__module__.startswith("adpasses."):
        # grad(grad(f)), jacfwd(grad(f)): derivatives are not composed by nesting the Python objects
        hint = ("; derivatives of derivatives: adpasses.hessian(f), adpasses.hvp(f)(x, v), or "
                "adpasses.grad called inside a jitted function (docs/forward_mode.md)")
    raise TypeError(f"expected a Python function or an adpasses.jit function, got {type(f).__name__}{hint}")


# -- grad -------------------------------------------------------------------------------


def grad(f: object, argnums: int | Sequence[int] = 0, *, memory_limit: int | str | None = None,
         schedule: str | None = None, snapshots: int | None = None, strong_zero: bool = False) -> Callable:
    """The gradient of a float-valued function, like jax.grad: a float for
    a float argument, a new array (same shape and dtype) for an array; a
    tuple of them when argnums is a tuple.

    Differentiates f at the given values and leaves every argument unchanged
    (arrays f writes are copied first). Arrays that share memory with one f
    writes are differentiated through that memory: each gets the derivative
    with respect to the memory it covers (docs/api.md, "Aliasing").

    `memory_limit` (bytes, or "32MB"): time loops whose tape may exceed it
    are checkpointed; `snapshots=S` (or `schedule="revolve"` with a
    memory_limit): by the binomial schedule holding S loop states, the
    fewest recomputations for that memory (docs/cache.md, "Checkpointing").

    `strong_zero=True` (Enzyme's flag): an adjoint whose seed is zero is
    zero even where a partial derivative is inf or nan (`0 * inf` gives 0,
    not nan), at a compare and a select per adjoint (docs/dialect.md)."""
    jf = _strong(_limited(as_jit(f), memory_limit, "grad()", schedule, snapshots), strong_zero, "grad()")
    return _grad_function(jf, argnums, with_value=False)


def _strong(jf: JitFunction, strong_zero: object, where: str) -> JitFunction:
    """`jf`, or the same function jitted to build its gradients with `strong_zero`."""
    if check_flag(strong_zero, "strong_zero", where) == jf.strong_zero:
        return jf
    return _jit_of(jf.py_func, jf.boundscheck, jf.fastmath, jf.cache, jf.tape_limit, jf.parallel,
                   bool(strong_zero))


def _limited(jf: JitFunction, memory_limit: object, where: str, schedule: object = None,
             snapshots: object = None) -> JitFunction:
    """`jf`, or the same function jitted with this checkpointing budget."""
    limit = parse_budget(memory_limit, schedule, snapshots, "memory_limit", where)
    if limit is None or limit == jf.tape_limit:
        return jf
    return _jit_of(jf.py_func, jf.boundscheck, jf.fastmath, jf.cache, limit, jf.parallel, jf.strong_zero)


def value_and_grad(f: object, argnums: int | Sequence[int] = 0, *,
                   memory_limit: int | str | None = None, schedule: str | None = None,
                   snapshots: int | None = None, strong_zero: bool = False) -> Callable:
    """`(f(*args), grad(f, argnums)(*args))` in one call; like grad, it
    leaves every argument unchanged (the value is f's on copies)."""
    jf = _strong(_limited(as_jit(f), memory_limit, "value_and_grad()", schedule, snapshots), strong_zero,
                 "value_and_grad()")
    return _grad_function(jf, argnums, with_value=True)


# Called in a jitted function (`grad(f)(x)`), they compile to an ad.autodiff
# (frontend/derivative_calls.py knows them by this mark: GRAD_INTRINSICS).
grad.__adpasses_intrinsic__ = "grad"  # type: ignore[attr-defined]
value_and_grad.__adpasses_intrinsic__ = "value_and_grad"  # type: ignore[attr-defined]


def _grad_function(jf: JitFunction, argnums: int | Sequence[int], with_value: bool) -> GradCallable:
    """One GradCallable per (function, argnums, with_value), so that
    `adpasses.grad(f)(x)` in a loop reuses its plans and fast paths."""
    # Plain ints seen before skip the checks (True == 1 is no plain int).
    plain = type(argnums) is int or (type(argnums) is tuple and all(type(k) is int for k in argnums))
    gf = jf._grad_functions.get((argnums, with_value)) if plain else None
    if gf is None:
        nums = _checked_argnums(jf, argnums, "value_and_grad" if with_value else "grad")
        key = (nums, with_value)
        gf = jf._grad_functions.get(key)
        if gf is None:
            # setdefault: threads asking at once all get the same one.
            gf = jf._grad_functions.setdefault(key, GradCallable(jf, nums, with_value))
    return gf


def _checked_argnums(jf: JitFunction, argnums: object, api: str) -> int | tuple[int, ...]:
    """argnums checked against jf's parameters (TypeError, ValueError)."""
    code = jf.py_func.__code__
    return check_argnums(argnums, f"{api}({jf.__name__}, argnums={argnums!r})", jf.__name__,
                         jf._params, f"{code.co_filename}:{code.co_firstlineno}")


# -- autodiff ---------------------------------------------------------------------------


def autodiff(f: object, *args: object, seed: float = 1.0, return_primal: bool = False,
             width: int = 1, strong_zero: bool = False) -> object:
    """Enzyme-style reverse mode. Arguments are wrapped: `Active(x)` for a
    float whose derivative is returned, `Duplicated(x, dx)` for an array
    whose derivative is added into `dx` (nothing is allocated for it),
    `Const(x)` or a plain value otherwise.

    Like Enzyme, this runs f on the arrays it is given: what f writes into
    its arguments is written (use `grad` to differentiate without changing
    them). Shadows must share memory exactly as their arrays do; calls that
    break this rule, give an array as its own or another argument's shadow,
    or pass a constant array sharing memory with a Duplicated one that f
    writes, raise ValueError naming the arguments.

    Returns a tuple with one entry per argument: the derivative for Active,
    None otherwise. With `return_primal=True`: `(derivatives, value)`, value
    being what f returns (None if it returns nothing). `seed` scales the
    derivative of a float result.

    `width=N`: vector reverse mode (Enzyme's BatchDuplicated): N
    cotangents in one sweep. Each `Duplicated` shadow has a leading
    dimension of N (lane k is `dx[k]`), `seed` is a float for every lane
    or N floats, one per lane, and the derivative of each Active float is
    an array of N floats (docs/api.md, adpasses/api/autodiff_width.py).

    `strong_zero=True`: Enzyme's flag (see `grad`)."""
    jf = as_jit(f)
    if strong_zero is not False:
        try:
            jf = _strong(jf, strong_zero, f"autodiff({jf.__name__})")
        except CompileError as err:
            raise for_user(err)
    if isinstance(width, bool) or not (isinstance(width, (int, np.integer)) and width == 1):
        from adpasses.api.autodiff_width import autodiff_lanes

        try:
            return autodiff_lanes(jf, args, seed, return_primal, width)
        except CompileError as err:
            raise for_user(err)
    if type(seed) is not float:  # checked before anything is compiled
        seed = _seed_value(seed)
    try:
        fast = jf._autodiff_fast.get(fast_key(args, return_primal))
    except TypeError:  # an unhashable flag: the general path's `check_flag` names it
        fast = None
    if fast is not None:
        got = fast(args, seed)
        if got is not MISS:
            return got
    try:
        return _autodiff(jf, args, seed, return_primal)
    except CompileError as err:
        raise for_user(err)  # the user's line and the message, not the compiler's frames


def _autodiff(jf: JitFunction, args: tuple, seed: float, return_primal: bool) -> object:
    """autodiff's general path: checks, compiles, installs a fast path."""
    # Fast paths are keyed by return_primal: one for "yes" never exists.
    return_primal = check_flag(return_primal, "return_primal", f"autodiff({jf.__name__})")
    values, activity, user_shadows = _unwrap(jf, jf.bind(args))
    arrays = [v for v in values if isinstance(v, np.ndarray)] + list(user_shadows.values())
    overlapping = len(arrays) > 1 and shadows.arrays_overlap(*arrays)
    if overlapping:  # byte ranges meet: the exact checks of Enzyme's aliasing rule
        check_autodiff_aliasing(jf.__name__, jf._params, values, activity, user_shadows,
                                jf.written_arrays(values))
    if any(not values[k].flags.c_contiguous and dx.strides != values[k].strides  # type: ignore[union-attr]
           for k, dx in user_shadows.items()):
        check_written_self_overlap(jf.__name__, jf._params, user_shadows, values, jf.written_arrays(values))
    # A C-contiguous array's compiled type is the identity layout, which its
    # shadow must have too: another layout goes through a contiguous copy,
    # written back after. Any other shadow is passed as it is (indices are
    # logical; the shadow's own strides are used).
    work = {}
    for k, dx in user_shadows.items():
        contiguous_copy = values[k].flags.c_contiguous and not dx.flags.c_contiguous  # type: ignore[union-attr]
        work[k] = np.array(dx, order="C") if contiguous_copy else dx
    noalias = not overlapping
    check_array_result_seeded(jf, values, activity, f"autodiff({jf.__name__})")
    g = jf.autodiff_gradient(values, tuple(activity), return_primal, noalias)
    # Calls like this one (every parameter passed, shadows used as given,
    # no overlap) go through a generated fast path next time.
    if noalias and len(values) == len(args) and all(work[k] is dx for k, dx in user_shadows.items()):
        key = fast_key(args, return_primal)
        if key not in jf._autodiff_fast:
            code = shadows.signature_code(*_with_shadows(values, work))
            made = make_fast_path(args, activity, g, return_primal, code)
            if made is not None:
                jf._autodiff_fast[key] = made
    ret = g.ret
    call_args = _with_shadows(values, work) + [seed] * ret.count("active")
    out = g.call(*call_args)
    outs = list(out) if isinstance(out, tuple) else ([] if out is None else [out])
    primal = None
    if return_primal and ret:  # f's results: one value, or the tuple f returns
        primal = outs.pop(0) if len(ret) == 1 else tuple(outs.pop(0) for _ in ret)
    for k, dx in user_shadows.items():
        if work[k] is not dx:
            dx[...] = work[k]  # dx's elements are distinct (checked by _unwrap)
    active = iter(outs)
    # One entry per argument passed (parameters filled from defaults are Const).
    derivs = tuple(next(active) if act == "active" else None for act in activity[:len(args)])
    return (derivs, primal) if return_primal else derivs


def check_array_result_seeded(jf: JitFunction, values: Sequence[object], activity: Sequence[str],
                              api: str) -> None:
    """autodiff seeds float results only: an array result is const (in a
    tuple beside a float, `return energy, forces`, the float is seeded).
    Where f returns arrays and no float, and writes no Duplicated array,
    nothing is seeded at all: the derivatives would come back as silent
    zeros. A TypeError naming vjp (a cotangent of the result's shape) or an
    output argument instead."""
    kinds = jf.result_kinds(values)
    if "array" not in kinds or "float" in kinds:
        return
    written = jf.written_arrays(values)
    if any(activity[k] in ("dup", "dupnoneed") for k in written):
        return  # derivatives are seeded through a written array's shadow (Duplicated(out, dout))
    what = "returns an array" if kinds == ("array",) else "returns a tuple of arrays and no float"
    raise TypeError(f"{api}: {jf.__name__}() {what}, and autodiff seeds only float results (seed=): "
                    "the derivatives would all be zero; use adpasses.vjp(f)(*args) (its vjp_fn "
                    "takes a cotangent of the result's shape) or adpasses.jacrev(f), or write the result "
                    "into an output argument and pass Duplicated(out, seed_array)")


def _seed_value(seed: object) -> float:
    """`seed` as a float: a real number (not a bool, a string or an array)."""
    if isinstance(seed, bool) or not isinstance(seed, numbers.Real):
        raise TypeError(f"autodiff(): seed must be a real number (the derivative of the function's "
                        f"float result to propagate back, 1.0 by default), got {type(seed).__name__} "
                        f"{seed!r}")
    return float(seed)


def _with_shadows(values: Sequence[object], work: dict[int, np.ndarray]) -> list[object]:
    out: list[object] = []
    for k, v in enumerate(values):
        out.append(v)
        if k in work:
            out.append(work[k])
    return out


def _unwrap(jf: JitFunction, args: Sequence[object]) -> tuple[list, list[str], dict[int, np.ndarray]]:
    """Values, activities and user shadows of autodiff's arguments. Every
    scalar is converted (running its `__float__`, `__index__`) before any
    array is examined."""
    name = jf.__name__
    raw, activity, given = split_markers(args, f"{name}()")
    values = list(plain_arguments(name, jf._params, raw))
    for k, dx in given.items():
        x = values[k]
        if not isinstance(x, np.ndarray) or not isinstance(dx, np.ndarray):
            raise TypeError(f"{name}(): Duplicated argument {k} needs two numpy arrays")
        if not is_honoured_array(dx):
            raise TypeError(array_subclass_problem(dx, f"{name}(): the shadow of argument {k}"))
        if dx.shape != x.shape or (dx.dtype is not x.dtype and dx.dtype != x.dtype):
            raise ValueError(f"{name}(): the shadow of argument {k} has shape {dx.shape} and "
                             f"dtype {dx.dtype}; it must match the array ({x.shape}, {x.dtype})")
        if x.dtype.kind != "f":
            raise TypeError(f"{name}(): argument {k} is an array of {x.dtype} and cannot be "
                            "Duplicated: only float arrays have derivatives")
        if not dx.flags.writeable:
            raise ValueError(f"{name}(): the shadow of argument {k} is read-only")
        check_shadow_layout(name, jf._params, k, x, dx)
    return values, activity, given


# -- inspection ------------------------------------------------------------------------------


@dataclass
class Inspection:
    """What the compiler does for grad(f, argnums)(*args)."""

    primal_mlir: str
    gradient_mlir: str
    llvm_ir: str
    activity: str
    cache_report: object
    noalias: bool
    timings: dict[str, float] = field(default_factory=dict)
    """Seconds per stage of what inspect ran: frontend, each reverse step
    (ad-...), lower (to LLVM IR)."""
    compilations: list = field(default_factory=list)
    """The function's CompileRecords so far: what its calls compiled or
    loaded, stage by stage, including LLVM (adpasses.api.compile_log)."""
    tangent_mlir: str = ""
    """hessian(f) and hvp(f): the forward-mode derivative of the gradient
    (forward over reverse), whose tangents are the Hessian's columns."""

    def __str__(self) -> str:
        stages = ", ".join(f"{name} {1e3 * s:.1f} ms" for name, s in self.timings.items())
        tangent = ["== tangent MLIR (forward over the gradient) ==", self.tangent_mlir] if self.tangent_mlir else []
        return "\n\n".join([
            "== primal MLIR ==", self.primal_mlir, "== gradient MLIR ==", self.gradient_mlir, *tangent,
            "== activity ==", self.activity, "== cache report ==", str(self.cache_report),
            "== timings ==", stages + "".join(f"\n{r}" for r in self.compilations),
        ])


def inspect(f: object, *args: object, argnums: int | Sequence[int] | None = None) -> Inspection:
    """The IR before and after differentiation, the LLVM IR, the activity
    and the cache report of grad(f, argnums)(*args), with the same activities
    and aliasing case as that call (locations point at the Python source).
    `f` may also be grad(f, argnums) or value_and_grad(f, argnums) (their
    argnums), or hessian(f, argnums) / hvp(f, argnums) (then the arguments
    are the call's, hvp's vector last): their gradient, its forward-mode
    derivative (`tangent_mlir`) and the forward-over-reverse cache report."""
    derivative = getattr(f, "derivative_kind", None)
    if derivative is not None:
        return _inspect_derivative(f, derivative, args, argnums)
    # jacrev, vjp, vmap objects (adpasses' own callables): say what to pass
    ours = (isinstance(f, types.FunctionType) and (f.__module__ or "").startswith("adpasses.")) or \
        type(f).__module__.startswith("adpasses.")
    try:
        jf = None if isinstance(f, types.FunctionType) and ours else as_jit(f)
    except TypeError:
        if not ours:
            raise
        jf = None
    if jf is None:
        inner = getattr(f, "jf", None) or getattr(f, "inner", None) or getattr(f, "__wrapped__", None)
        wrapped = getattr(inner, "__name__", "f")
        raise TypeError(f"inspect() shows the derivatives grad, value_and_grad, hessian and hvp compute; "
                        f"for {getattr(f, '__name__', type(f).__name__)} pass the function and the arguments: "
                        f"adpasses.inspect({wrapped}, *args, argnums=...) shows its gradient")
    argnums = _checked_argnums(jf, 0 if argnums is None else argnums, "inspect")
    try:
        return _inspect(jf, jf.bind(args), argnums)
    except CompileError as err:
        raise for_user(err)  # the user's line and the message, not the compiler's frames


def _inspect_derivative(obj, kind: str, args: tuple, argnums: object) -> Inspection:  # type: ignore[no-untyped-def]
    """inspect() of a derivative object: its own argnums, which an explicit
    `argnums=` must not contradict."""
    name = obj.jf.__name__
    if kind not in ("grad", "value_and_grad", "hessian", "hvp"):
        raise TypeError(f"inspect() shows the derivatives grad, value_and_grad, hessian and hvp compute; "
                        f"for {kind}({name}) pass the function and the arguments: "
                        f"adpasses.inspect({name}, *args, argnums=...) shows its gradient")
    own = obj.argnums
    if argnums is not None:
        given = _checked_argnums(obj.jf, argnums, "inspect")
        if normalize_argnums(given, len(obj.jf._params), name) != normalize_argnums(own, len(obj.jf._params), name):
            raise ValueError(f"inspect({obj.__name__}, argnums={argnums!r}): {obj.__name__} differentiates "
                             f"argnums={own!r}; leave argnums= out (or pass {own!r})")
    try:
        if kind in ("grad", "value_and_grad"):
            return _inspect(obj.jf, obj.jf.bind(args), own)
        return _inspect_second_order(obj, args)
    except CompileError as err:
        raise for_user(err)  # the user's line and the message, not the compiler's frames


@compile_entry
def _inspect_second_order(obj, args: tuple) -> Inspection:  # type: ignore[no-untyped-def]
    """hessian(f) / hvp(f): the module cache_report(obj, *args) builds."""
    from adpasses.api.forward import forward_over_reverse
    from adpasses.lowering import emit_llvm_ir

    report, primal, g, t, module = forward_over_reverse(obj, args, f"inspect({obj.__name__})",
                                                        show=_with_locations)
    return Inspection(
        primal_mlir=primal, gradient_mlir=_with_locations(g.function), llvm_ir=emit_llvm_ir(module),
        activity=g.activity_report, cache_report=report, noalias=True,
        compilations=list(obj.jf.compilations), tangent_mlir=_with_locations(t.function))


@compile_entry  # it prints and lowers the IR: recursion as deep as compiling
def _inspect(jf: JitFunction, args: tuple, argnums: int | Sequence[int]) -> Inspection:
    from adpasses.lowering import emit_llvm_ir
    from adpasses.transforms.reverse_pass import ReverseOptions, differentiate

    args = plain_arguments(jf.__name__, jf._params, args)
    jf.arg_types(args)
    nums = normalize_argnums(argnums, len(args), jf.__name__)
    planned, written = grad_activity(jf, args, nums)
    # What grad decides for these arguments (members of a written group
    # differentiated, the aliasing version), without running anything.
    call = grad_call(jf.__name__, jf._params, args, planned, written)
    activity, noalias = call.activity, call.noalias
    timings: dict[str, float] = {}
    jf._spare.pop(signature_key(tuple(args)), None)  # built now, so that the frontend is timed
    module, name = jf.build(args, noalias)
    timings["frontend"] = jf._frontend_s.pop(signature_key(tuple(args)), 0.0)
    primal_text = _with_locations(module)
    from adpasses.api.parallel_loops import parallel_loops

    parallel = parallel_loops("primal", function_named(module, name))
    # The options of the compiled gradient (`_compile_gradient`), so that
    # the IR shown is the IR that runs.
    g = differentiate(module, name, list(activity), list(jf.return_activity(args)),
                      options=jf.reverse_options(), timings=timings)
    start = time.perf_counter()
    llvm_ir = emit_llvm_ir(module, boundscheck=jf.boundscheck)
    timings["lower"] = time.perf_counter() - start
    return Inspection(
        primal_mlir=primal_text,
        gradient_mlir=_with_locations(g.function),
        llvm_ir=llvm_ir,
        activity=g.activity_report,
        cache_report=replace(g.cache_report.bind(list(args)),
                             parallel_loops=parallel + parallel_loops("gradient", g.function)),
        noalias=noalias,
        timings=timings,
        compilations=list(jf.compilations),
    )


def _with_locations(op) -> str:  # type: ignore[no-untyped-def]
    """MLIR text with each op's `loc("file.py":line:col)`."""
    import io

    from xdsl.printer import Printer

    out = io.StringIO()
    Printer(stream=out, print_debuginfo=True).print_op(op)
    return out.getvalue()


def cache_report(f: object, *args: object, argnums: int | Sequence[int] = 0) -> object:
    """The `CacheReport` of grad(f, argnums) for these arguments: per needed
    value its decision, reason, location, dtype, count and bytes, and the
    total `.taped_bytes`. For `hessian(f)` or `hvp(f)` (then the arguments
    are the call's, v last): a `ForwardOverReverseReport`, the gradient's
    report and what the tangent sweep tapes beside it."""
    second_order = getattr(f, "_cache_report", None)  # hessian(f), hvp(f): api/forward.py
    if second_order is not None:
        try:
            return second_order(args)
        except CompileError as err:
            raise for_user(err)
    jf = as_jit(f)
    argnums = _checked_argnums(jf, argnums, "cache_report")
    try:
        return _inspect(jf, jf.bind(args), argnums).cache_report
    except CompileError as err:
        raise for_user(err)  # the user's line and the message, not the compiler's frames
