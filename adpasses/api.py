"""The Python API: `jit`, `grad`, `value_and_grad`, `autodiff`, `inspect`,
`cache_report`.

Every compiled variant is cached per signature (argument kinds, dtypes,
ranks, C-contiguity), per differentiated argument set, and per aliasing
case: when no two arrays of a call overlap in memory, a version whose
memref arguments carry `ad.noalias` is used (the reverse pass reloads
instead of taping, LLVM vectorises); when some do, the conservative version.
"""

from __future__ import annotations

import inspect as pyinspect
import types
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from adpasses.frontend.signature import ArrayArg, arg_type, signature_key

# -- markers (Enzyme's activities) ------------------------------------------------


@dataclass(frozen=True)
class Const:
    """Not differentiated."""

    value: object


@dataclass(frozen=True)
class Active:
    """A float whose derivative `autodiff` returns."""

    value: float


@dataclass(frozen=True)
class Duplicated:
    """An array and its shadow: the derivative is added into `shadow`; on
    entry `shadow` seeds the array's final contents (an output array)."""

    value: np.ndarray
    shadow: np.ndarray


@dataclass(frozen=True)
class DuplicatedNoNeed(Duplicated):
    """Like Duplicated; the array's final contents need not be right."""


# -- jit ------------------------------------------------------------------------------


class JitFunction:
    """A Python function compiled on first call per signature."""

    def __init__(self, fn: types.FunctionType, boundscheck: bool = True, fastmath: bool = False):
        if not isinstance(fn, types.FunctionType):
            raise TypeError(f"adpasses.jit needs a Python function, got {type(fn).__name__}")
        self.__adpasses_function__ = fn
        self.py_func = fn
        self.boundscheck = boundscheck
        self.fastmath = fastmath
        self.__name__ = fn.__name__
        self.__doc__ = fn.__doc__
        self.__wrapped__ = fn
        self._params = list(pyinspect.signature(fn).parameters)
        self._primal: dict[tuple, Callable] = {}
        self._by_code: dict[int, Callable] = {}
        self._gradients: dict[tuple, _Gradient] = {}

    def __repr__(self) -> str:
        return f"<adpasses.jit {self.py_func.__module__}.{self.py_func.__qualname__}>"

    def __call__(self, *args: object) -> object:
        call = self._by_code.get(_signature(*args))
        if call is None:
            return self._slow_call(args)
        return call(*args)

    def _slow_call(self, args: tuple) -> object:
        call = self._primal.get(signature_key(args))
        if call is None:
            call = self._compile_primal(args)
        code = _signature(*args)
        if code:
            self._by_code[code] = call
        return call(*args)

    # -- compilation ----------------------------------------------------------

    def arg_types(self, args: Sequence[object]) -> list:
        if len(args) != len(self._params):
            raise TypeError(f"{self.__name__}() takes {len(self._params)} arguments, got {len(args)}")
        return [arg_type(a, k, self._params[k]) for k, a in enumerate(args)]

    def build(self, args: Sequence[object], noalias: bool = False):  # type: ignore[no-untyped-def]
        from xdsl.dialects.builtin import DictionaryAttr, UnitAttr

        from adpasses.frontend import build_module

        types_ = self.arg_types(args)
        module, name = build_module(self.py_func, types_)
        if noalias:
            f = _function(module, name)
            f.arg_attrs = _array_attr([
                DictionaryAttr({"ad.noalias": UnitAttr()} if isinstance(t, ArrayArg) else {})
                for t in types_
            ])
        return module, name, types_

    def written_arrays(self, args: Sequence[object]) -> set[int]:
        """Positions of the array arguments the function may write."""
        from adpasses.pyentry import written_parameters

        module, name, _ = self.build(args)
        return written_parameters(_function(module, name))

    def _compile_primal(self, args: Sequence[object]) -> Callable:
        from adpasses.llvm_jit import compile_module

        module, name, _ = self.build(args)
        call = compile_module(module, boundscheck=self.boundscheck, fastmath=self.fastmath)[name]
        self._primal[signature_key(args)] = call
        return call

    def gradient(self, args: Sequence[object], activity: tuple[str, ...], with_primal: bool,
                 noalias: bool, ret: tuple[str, ...] | None = None) -> _Gradient:
        key = (signature_key(args), activity, with_primal, noalias, ret)
        g = self._gradients.get(key)
        if g is None:
            g = _Gradient.compile(self, args, activity, with_primal, noalias, ret)
            self._gradients[key] = g
        return g


def jit(fn: types.FunctionType | None = None, *, boundscheck: bool = True,
        fastmath: bool = False):  # type: ignore[no-untyped-def]
    """`@jit` or `@jit(boundscheck=False, fastmath=True)`."""
    if fn is None:
        return lambda f: JitFunction(f, boundscheck, fastmath)
    return JitFunction(fn, boundscheck, fastmath)


_AUTO_JIT: dict[types.FunctionType, JitFunction] = {}


def as_jit(f: object) -> JitFunction:
    if isinstance(f, JitFunction):
        return f
    if isinstance(f, types.FunctionType):
        if f not in _AUTO_JIT:
            _AUTO_JIT[f] = JitFunction(f)
        return _AUTO_JIT[f]
    raise TypeError(f"expected a Python function or an adpasses.jit function, got {type(f).__name__}")


# -- gradients --------------------------------------------------------------------------


@dataclass
class _Gradient:
    call: Callable
    activity: tuple[str, ...]
    ret: tuple[str, ...]
    with_primal: bool
    report: object
    gradient_name: str
    module: object
    activity_text: str

    @staticmethod
    def compile(jf: JitFunction, args: Sequence[object], activity: tuple[str, ...],
                with_primal: bool, noalias: bool, ret: tuple[str, ...] | None) -> _Gradient:
        from xdsl.dialects.builtin import Float32Type, Float64Type

        from adpasses.llvm_jit import compile_module
        from adpasses.transforms.reverse_pass import ReverseOptions, differentiate

        module, name, _ = jf.build(args, noalias)
        f = _function(module, name)
        outputs = list(f.function_type.outputs.data)
        if ret is None:
            if not outputs or not isinstance(outputs[0], (Float64Type, Float32Type)):
                what = "returns nothing" if not outputs else f"returns {outputs[0]}, not a float"
                raise TypeError(
                    f"{jf.__name__}() {what}: grad needs a scalar float result; to differentiate a "
                    "function that writes an output array, use adpasses.autodiff(f, ..., "
                    "Duplicated(out, seed_array))"
                )
            ret = ("active",)
        g = differentiate(module, name, list(activity), list(ret), with_primal=with_primal,
                          options=ReverseOptions(simplify=False))
        compiled = compile_module(module, boundscheck=jf.boundscheck, fastmath=jf.fastmath)
        return _Gradient(compiled[g.name], activity, ret, with_primal, g.cache_report, g.name,
                         module, g.activity_report)


def _function(module, name: str):  # type: ignore[no-untyped-def]
    from xdsl.dialects import func

    for op in module.ops:
        if isinstance(op, func.FuncOp) and op.sym_name.data == name:
            return op
    raise KeyError(name)


def _array_attr(items):  # type: ignore[no-untyped-def]
    from xdsl.dialects.builtin import ArrayAttr

    return ArrayAttr(items)


def zeros_like_layout(x: np.ndarray) -> np.ndarray:
    """Zeros with the same shape, dtype and strides as `x` (shadows must be
    indexed with their primal's strides)."""
    if x.flags.c_contiguous:
        return np.zeros(x.shape, x.dtype)
    if x.size == 0:
        return np.zeros(x.shape, x.dtype)
    item = x.itemsize
    lo = sum(min(0, (n - 1) * s) for n, s in zip(x.shape, x.strides))
    hi = sum(max(0, (n - 1) * s) for n, s in zip(x.shape, x.strides)) + item
    buffer = np.zeros((hi - lo) // item, x.dtype)
    start = buffer[(-lo) // item:]
    return np.lib.stride_tricks.as_strided(start, x.shape, x.strides)


def _shared_shadows(args: Sequence[object], activity: Sequence[str]) -> dict[int, np.ndarray]:
    """Shadows for dup arrays that may overlap, when the function writes
    one of them: views of one zeroed shadow of their common base buffer, at
    the same byte offsets, so that derivatives flow through the shared
    memory exactly as values do."""
    def root(a: np.ndarray) -> np.ndarray:
        while isinstance(a.base, np.ndarray):
            a = a.base
        return a

    bases: dict[int, np.ndarray] = {}
    result: dict[int, np.ndarray] = {}
    for k, (a, act) in enumerate(zip(args, activity)):
        if act != "dup":
            continue
        r = root(a)  # type: ignore[arg-type]
        if id(r) not in bases:
            bases[id(r)] = zeros_like_layout(r)
        sr = bases[id(r)]
        offset = a.__array_interface__["data"][0] - r.__array_interface__["data"][0]  # type: ignore[union-attr]
        flat = sr.reshape(-1) if sr.flags.c_contiguous else np.lib.stride_tricks.as_strided(
            sr, (sr.nbytes // sr.itemsize,), (sr.itemsize,))
        start = flat[offset // sr.itemsize:]
        result[k] = np.lib.stride_tricks.as_strided(start, a.shape, a.strides)  # type: ignore[union-attr]
    return result


def _no_overlap(arrays: list[np.ndarray]) -> bool:
    return not _overlap(*arrays)


def _signature(*args: object) -> int:
    global _signature, _overlap
    from adpasses.dispatch import fast_functions

    _signature, _overlap = fast_functions()
    return _signature(*args)


def _overlap(*args: object) -> bool:
    _signature()
    return _overlap(*args)


def _normalize_argnums(argnums: int | Sequence[int], n: int, name: str) -> tuple[int, ...]:
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    for k in nums:
        if not -n <= k < n:
            raise ValueError(f"argnums {k} is out of range for {name}() with {n} arguments")
    return tuple(k % n for k in nums)


@dataclass
class _GradPlan:
    """What one signature of a grad call needs, computed once."""

    activity: tuple[str, ...]
    nums: tuple[int, ...]
    n_arrays: int
    variants: dict[bool, _Gradient]
    contiguous: dict[int, bool]
    written: set[int]


class _GradFunction:
    def __init__(self, f: object, argnums: int | Sequence[int], with_value: bool):
        self.jf = as_jit(f)
        self.argnums = argnums
        self.with_value = with_value
        self.single = isinstance(argnums, int)
        self.__name__ = f"{'value_and_grad' if with_value else 'grad'}({self.jf.__name__})"
        self._plans: dict[int, _GradPlan] = {}

    def _plan(self, args: tuple) -> _GradPlan:
        jf = self.jf
        jf.arg_types(args)  # TypeError naming a bad argument
        nums = _normalize_argnums(self.argnums, len(args), jf.__name__)
        activity = []
        for k, a in enumerate(args):
            if k not in nums:
                activity.append("const")
            elif isinstance(a, np.ndarray):
                if a.dtype.kind != "f":
                    raise TypeError(f"{jf.__name__}(): argument {k} is an integer array and cannot be differentiated")
                activity.append("dup")
            elif isinstance(a, (float, np.floating)):
                activity.append("active")
            else:
                raise TypeError(f"{jf.__name__}(): argument {k} ({type(a).__name__}) cannot be "
                                "differentiated: only floats and float arrays can")
        # Float arrays the function writes (outputs, scratch) take a
        # throwaway shadow even when not differentiated: derivatives may flow
        # through their memory.
        written = self.jf.written_arrays(args)
        for k in written:
            if activity[k] == "const" and args[k].dtype.kind == "f":  # type: ignore[union-attr]
                activity[k] = "dup"
        n_arrays = sum(isinstance(a, np.ndarray) for a in args)
        contiguous = {k: bool(a.flags.c_contiguous) for k, a in enumerate(args)
                      if activity[k] == "dup"}  # part of the signature code
        return _GradPlan(tuple(activity), nums, n_arrays, {}, contiguous, written)

    def __call__(self, *args: object) -> object:
        code = _signature(*args)
        plan = self._plans.get(code) if code else None
        if plan is None:
            plan = self._plan(args)
            if code:
                self._plans[code] = plan
        noalias = plan.n_arrays <= 1 or not _overlap(*args)
        g = plan.variants.get(noalias)
        if g is None:
            g = self.jf.gradient(args, plan.activity, self.with_value, noalias)
            if code:
                plan.variants[noalias] = g
        call_args: list[object] = []
        shared = None if noalias or not plan.written else _shared_shadows(args, plan.activity)
        shadows = {}
        for k, (a, act) in enumerate(zip(args, plan.activity)):
            call_args.append(a)
            if act == "dup":
                if shared is not None:
                    shadow = shared[k]
                else:
                    shadow = (np.zeros(a.shape, a.dtype) if plan.contiguous[k]  # type: ignore[union-attr]
                              else zeros_like_layout(a))  # type: ignore[arg-type]
                shadows[k] = shadow
                call_args.append(shadow)
        call_args.append(1.0)
        out = g.call(*call_args)
        if self.single and not self.with_value:
            k = plan.nums[0]
            if plan.activity[k] == "dup":
                return shadows[k] if plan.contiguous[k] else np.array(shadows[k])
            return out
        outs = list(out) if isinstance(out, tuple) else [out]
        value = outs.pop(0) if self.with_value else None
        active = iter(outs)
        grads = []
        for k in plan.nums:
            if plan.activity[k] == "dup":
                s = shadows[k]
                grads.append(s if s.flags.c_contiguous else np.array(s))
            else:
                grads.append(next(active))
        result = grads[0] if self.single else tuple(grads)
        return (value, result) if self.with_value else result


def grad(f: object, argnums: int | Sequence[int] = 0) -> Callable:
    """The gradient of a scalar-valued function, like jax.grad."""
    return _GradFunction(f, argnums, with_value=False)


def value_and_grad(f: object, argnums: int | Sequence[int] = 0) -> Callable:
    """(f(args), grad(f)(args)) in one call."""
    return _GradFunction(f, argnums, with_value=True)


def autodiff(f: object, *args: object, seed: float = 1.0, return_primal: bool = False) -> object:
    """Enzyme-style reverse mode. Arguments are wrapped: Active(x) for a
    float whose derivative is returned, Duplicated(x, dx) for an array whose
    derivative is added into dx, Const(x) (or a plain value) otherwise.
    Returns a tuple with one entry per argument (the derivative for Active,
    None otherwise); with return_primal=True, (derivatives, primal result)."""
    jf = as_jit(f)
    values, activity, shadows = [], [], {}
    for k, a in enumerate(args):
        if isinstance(a, DuplicatedNoNeed | Duplicated):
            x, dx = a.value, a.shadow
            if not isinstance(x, np.ndarray) or not isinstance(dx, np.ndarray):
                raise TypeError(f"{jf.__name__}(): Duplicated argument {k} needs two numpy arrays")
            if dx.shape != x.shape or dx.dtype != x.dtype:
                raise ValueError(f"{jf.__name__}(): the shadow of argument {k} has shape {dx.shape} and "
                                 f"dtype {dx.dtype}; it must match the array ({x.shape}, {x.dtype})")
            if not dx.flags.writeable:
                raise ValueError(f"{jf.__name__}(): the shadow of argument {k} is read-only")
            values.append(x)
            activity.append("dupnoneed" if isinstance(a, DuplicatedNoNeed) else "dup")
            shadows[k] = dx
        elif isinstance(a, Active):
            if not isinstance(a.value, (float, np.floating)):
                raise TypeError(f"{jf.__name__}(): Active argument {k} must be a float, got {type(a.value).__name__}")
            values.append(a.value)
            activity.append("active")
        elif isinstance(a, Const):
            values.append(a.value)
            activity.append("const")
        else:
            values.append(a)
            activity.append("const")
    # Shadows must have their primal's strides: use a same-layout temporary
    # when the caller's shadow is laid out differently.
    work: dict[int, np.ndarray] = {}
    for k, dx in shadows.items():
        x = values[k]
        if dx.strides != x.strides:
            tmp = zeros_like_layout(x)
            tmp[...] = dx
            work[k] = tmp
        else:
            work[k] = dx
    arrays = [v for v in values if isinstance(v, np.ndarray)] + list(work.values())
    noalias = _no_overlap(arrays)
    module_types = jf.arg_types(values)
    ret = _return_activity(jf, values)
    g = jf.gradient(values, tuple(activity), return_primal, noalias, ret)
    call_args: list[object] = []
    for k, v in enumerate(values):
        call_args.append(v)
        if k in work:
            call_args.append(work[k])
    if ret == ("active",):
        call_args.append(float(seed))
    out = g.call(*call_args)
    outs = list(out) if isinstance(out, tuple) else ([] if out is None else [out])
    primal = outs.pop(0) if return_primal and g.ret else None
    for k, dx in shadows.items():
        if work[k] is not dx:
            dx[...] = work[k]
    active = iter(outs)
    derivs = tuple(next(active) if act == "active" else None for act in activity)
    del module_types
    return (derivs, primal) if return_primal else derivs


def _return_activity(jf: JitFunction, values: list[object]) -> tuple[str, ...]:
    from xdsl.dialects.builtin import Float32Type, Float64Type

    key = ("ret", signature_key(tuple(values)))
    cached = jf._gradients.get(key)  # type: ignore[arg-type]
    if cached is not None:
        return cached  # type: ignore[return-value]
    module, name, _ = jf.build(values)
    outputs = list(_function(module, name).function_type.outputs.data)
    ret = tuple("active" if isinstance(t, (Float64Type, Float32Type)) else "const" for t in outputs)
    jf._gradients[key] = ret  # type: ignore[assignment]
    return ret


# -- inspection ------------------------------------------------------------------------------


@dataclass
class Inspection:
    primal_mlir: str
    gradient_mlir: str
    llvm_ir: str
    activity: str
    cache_report: object

    def __str__(self) -> str:
        return "\n\n".join([
            "== primal MLIR ==", self.primal_mlir, "== gradient MLIR ==", self.gradient_mlir,
            "== activity ==", self.activity, "== cache report ==", str(self.cache_report),
        ])


def inspect(f: object, *args: object, argnums: int | Sequence[int] = 0) -> Inspection:
    """What the compiler does for grad(f, argnums)(*args): IR before and
    after differentiation, the LLVM IR, the activity and the cache report
    (locations point at the Python source)."""
    from adpasses.lowering import emit_llvm_ir
    from adpasses.transforms.reverse_pass import differentiate

    jf = as_jit(f)
    nums = _normalize_argnums(argnums, len(args), jf.__name__)
    activity = [
        ("dup" if isinstance(a, np.ndarray) else "active") if k in nums else "const"
        for k, a in enumerate(args)
    ]
    module, name, _ = jf.build(args)
    primal_text = str(module)
    ret = _return_activity(jf, list(args))
    g = differentiate(module, name, activity, list(ret))
    return Inspection(
        primal_mlir=primal_text,
        gradient_mlir=str(g.function),
        llvm_ir=emit_llvm_ir(module, boundscheck=jf.boundscheck),
        activity=g.activity_report,
        cache_report=g.cache_report.bind(list(args)),
    )


def cache_report(f: object, *args: object, argnums: int | Sequence[int] = 0) -> object:
    """The `CacheReport` of grad(f, argnums) for these arguments: per needed
    value its decision, reason, location, dtype, count and bytes, and the
    total `.taped_bytes`."""
    return inspect(f, *args, argnums=argnums).cache_report
