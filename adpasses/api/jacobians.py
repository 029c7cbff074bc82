"""`jacrev`: Jacobians by reverse sweeps (JAX's name and conventions).

A function returning a float has a gradient: `jacrev(f, argnums)` is
`grad(f, argnums)`. A function returning an array or a tuple gets one
vector-Jacobian product per output element (`jacobian_of_results`, through
adpasses.api.vjp). A function that writes an output array marks it with
`Output(out)` at the call:

    J = adpasses.jacrev(f, argnums=0)(x, adpasses.Output(out))
    J.shape == out.shape + x.shape;  J[i..., j...] = d out[i...] / d x[j...]

Reverse sweeps over the elements of `out`, all of them in compiled code:
the module holds the gradient of f and a driver looping over the output's
elements (adpasses/transforms/seed_loops.py), so a call is one compiled
call whatever the output's size. The gradient is vector reverse mode of
`width` lanes (`ad.autodiff {width = N}`): each forward sweep serves
`width` output elements (default min(out.size, 16): a function with few
outputs takes one forward sweep). Like `grad`, arguments are left unchanged
(f runs on copies of the arrays it writes, restored before each sweep);
the derivatives are those of out's final contents at the caller's
contents of every argument, `out` included.

Calls are planned once per shape of the call (marker position, argument
signature code): later calls go through a generated function that checks
the signature code and overlap, allocates the Jacobians, copies the
written arrays and makes the one compiled call.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from adpasses.api import shadows
from adpasses.api.aliasing import check_written_distinct
from adpasses.api.gradcall import grad_activity, normalize_argnums
from adpasses.api.markers import Output
from adpasses.core.diagnostics import CompileError, for_user
from adpasses.native.arguments import plain_arguments

MAX_WIDTH = 16
"""The widest vector reverse mode jacrev uses by default: an output of
n <= 16 elements takes one forward sweep of width n."""


def jacrev(f: object, argnums: int | Sequence[int] = 0, *, width: int | None = None) -> Callable:
    """The Jacobian by reverse sweeps, like jax.jacrev: for f returning a
    float, `grad(f, argnums)`; for f writing an array marked `Output(out)`
    at the call, an array of shape `out.shape + x.shape` per differentiated
    argument x (a tuple when argnums is a tuple), x's dtype. `width`:
    cotangents per forward sweep (vector reverse mode; default
    min(out.size, 16))."""
    from adpasses.api.functions import _checked_argnums, as_jit

    jf = as_jit(f)
    if width is not None and (isinstance(width, bool) or not isinstance(width, (int, np.integer))
                              or width < 1):
        raise ValueError(f"jacrev({jf.__name__}): width must be a positive int (cotangents per "
                         f"sweep), got {width!r}")
    width = None if width is None else int(width)
    plain = type(argnums) is int or (type(argnums) is tuple and all(type(k) is int for k in argnums))
    made = jf._jacobian_functions.get(("jacrev", argnums, width)) if plain else None
    if made is None:
        nums = _checked_argnums(jf, argnums, "jacrev")
        made = jf._jacobian_functions.setdefault(("jacrev", nums, width), JacrevCallable(jf, nums, width))
    return made


@dataclass
class JacrevPlan:
    """What calls of one shape need, computed once."""

    out: int                       # position of the Output argument
    activity: tuple[str, ...]
    nums: tuple[int, ...]
    written: tuple[int, ...]       # arrays f writes (copied, restored before each sweep)
    width: int                     # output elements per forward sweep (vector reverse mode)
    call: Callable                 # the compiled driver
    compiled: object               # its CompiledModule (keeps the machine code alive)
    fast: Callable | None = None


class JacrevCallable:
    """The callable `jacrev(f, argnums)` returns."""

    def __init__(self, jf, argnums: int | tuple[int, ...], width: int | None = None):  # type: ignore[no-untyped-def]
        self.jf = jf
        self.argnums = argnums
        self.width = width
        self.single = isinstance(argnums, int)
        self.__name__ = f"jacrev({jf.__name__})"
        self.__wrapped__ = jf.py_func
        self._fast: dict[tuple, Callable] = {}   # marker classes of the call -> generated path

    def __repr__(self) -> str:
        return f"<adpasses.{self.__name__}>"

    def __reduce__(self) -> tuple:
        """Pickled by reference, like grad objects: the function's
        reference and argnums."""
        return (rebuild_jacobian, ("jacrev", self.jf, self.argnums, self.width))

    def __call__(self, *args: object, **kwargs: object) -> object:
        if not kwargs:
            fast = self._fast.get(tuple(map(type, args)))
            if fast is not None:
                return fast(*args)
        try:
            return self._slow_call(args, kwargs)
        except CompileError as err:
            raise for_user(err)  # the user's line and the message, not the compiler's frames

    def _slow_call(self, args: tuple, kwargs: dict) -> object:
        from adpasses.api.functions import _grad_function

        jf = self.jf
        outs = [k for k, a in enumerate(args) if isinstance(a, Output)]
        outs += [k for k, (name, a) in enumerate(kwargs.items()) if isinstance(a, Output)]
        if not outs:
            bound = jf.bind(args, kwargs)
            ret = jf.return_activity(bound)
            kinds = jf.result_kinds(plain_arguments(jf.__name__, jf._params, bound))
            if "array" in kinds or len(kinds) > 1:
                return jacobian_of_results(jf, bound, self.argnums, self.__name__)
            if ret != ("active",):
                raise TypeError(f"{self.__name__}: {jf.__name__}() does not return a float; mark the "
                                "array it writes its result into: "
                                f"jacrev({jf.__name__})(..., adpasses.Output(out), ...)")
            return _grad_function(jf, self.argnums, with_value=False)(*args, **kwargs)
        if len(outs) > 1:
            raise TypeError(f"{self.__name__}: Output marks {len(outs)} arguments; mark the one array "
                            "whose Jacobian you want")
        unwrapped = tuple(a.value if isinstance(a, Output) else a for a in args)
        unkw = {k: (a.value if isinstance(a, Output) else a) for k, a in kwargs.items()}
        bound = jf.bind(unwrapped, unkw)
        # The Output's position among all parameters.
        marked = next(iter(k for k, a in enumerate(args) if isinstance(a, Output)), None)
        if marked is None:
            name = next(n for n, a in kwargs.items() if isinstance(a, Output))
            marked = jf._params.index(name)
        values = plain_arguments(jf.__name__, jf._params, bound)
        plan = self._plan(values, marked)
        if not kwargs and len(args) == len(values) and shadows.signature_code(*values):
            self._fast.setdefault(tuple(map(type, args)), _fast_path(self, plan, args, values))
        return _run(plan, values, self.single)

    def _plan(self, values: tuple, out: int) -> JacrevPlan:
        jf = self.jf
        jf.arg_types(values)  # TypeError naming a bad argument
        name = jf.__name__
        target = values[out]
        if not isinstance(target, np.ndarray) or target.dtype.kind != "f":
            what = f"an array of {target.dtype}" if isinstance(target, np.ndarray) else type(target).__name__
            raise TypeError(f"{self.__name__}: Output marks argument {out} ({jf._params[out]}), "
                            f"{what}; it must be a float array that {name}() writes")
        nums = normalize_argnums(self.argnums, len(values), name)
        activity, written = grad_activity(jf, values, nums)
        if out not in written:
            raise ValueError(f"{self.__name__}: {name}() never writes argument {out} "
                             f"({jf._params[out]}), marked Output: mark the array it writes its "
                             "result into")
        check_written_distinct(jf, self.__name__, values)
        width = self.width or max(1, min(target.size, MAX_WIDTH))
        key = (shadows.signature_code(*values) or _slow_key(jf, values), activity, out, nums, width)
        got = jf._jacobian_plans.get(key)
        if got is None:
            from adpasses.core.compile_locks import once

            got = once(jf._jacobian_plans, key,
                       lambda: _compile(jf, values, activity, out, tuple(sorted(written)), nums, width))
        return got


def _slow_key(jf, values: tuple) -> tuple:  # type: ignore[no-untyped-def]
    from adpasses.frontend.signature import signature_key

    return signature_key(values)


def _compile(jf, values: tuple, activity: tuple[str, ...], out: int, written: tuple[int, ...],  # type: ignore[no-untyped-def]
             nums: tuple[int, ...], width: int) -> JacrevPlan:
    record = jf._record("jacrev", values, activity)
    parts: tuple = ()
    if jf.cache:  # a disk cache entry, like a gradient's (adpasses/api/disk_cache.py)
        parts = (jf._disk_signature(values), activity, out, written, nums, width)
        if jf.tape_limit is not None:
            parts += (("tape_limit", jf.tape_limit),)
        hit = jf.disk.load("jacrev", parts)
        if hit is not None:
            compiled, entry = hit
            jf._loaded(record, compiled)
            return JacrevPlan(out, activity, nums, written, width, compiled[entry["name"]], compiled)
    from adpasses.api.functions import function_named, _private
    from adpasses.core.compile_locks import load_compiler

    load_compiler()  # before the first lazy import: see compile_locks (fork)
    from adpasses.native.llvm_jit import compile_module
    from adpasses.transforms.reverse_pass import ReverseOptions, differentiate
    from adpasses.transforms.seed_loops import add_jacrev_driver

    module, name = jf.build(values, noalias=True)
    record.stages["frontend"] = jf._frontend_s.pop(_slow_key(jf, values), 0.0)
    ret = jf.return_activity(values)
    g = differentiate(module, name, list(activity), list(ret), width=width,
                      options=ReverseOptions(simplify=False), timings=record.stages)
    driver = f"{name}_jacrev_{len(jf._jacobian_plans)}"
    add_jacrev_driver(module, g.function, activity, ret, out, written, nums, driver, width)
    function_named(module, name).sym_visibility = _private()
    from adpasses.native.llvm_jit import stats

    before = stats["compiled"]
    compiled = compile_module(module, boundscheck=jf.boundscheck, fastmath=jf.fastmath)
    jf._compiled(record, compiled, before)
    if jf.cache:
        jf.disk.store("jacrev", parts, compiled, name=driver)
    return JacrevPlan(out, activity, nums, written, width, compiled[driver], compiled)


def _jacobian_shapes(plan: JacrevPlan, values: Sequence[object]) -> list[tuple[tuple[int, ...], object]]:
    out = values[plan.out]
    shapes = []
    for k in plan.nums:
        v = values[k]
        if isinstance(v, np.ndarray):
            shapes.append((out.shape + v.shape, v.dtype))  # type: ignore[union-attr]
        else:
            shapes.append((out.shape, np.float64))  # type: ignore[union-attr]
    return shapes


def _run(plan: JacrevPlan, values: Sequence[object], single: bool) -> object:
    """One call of the driver: copies of written arrays, scratch shadows,
    the Jacobians."""
    call_args: list[object] = []
    work = {k: np.array(values[k], order="C") for k in plan.written}
    for k, (v, act) in enumerate(zip(values, plan.activity)):
        call_args.append(work.get(k, v))
        if act in ("dup", "dupnoneed"):
            call_args.append(np.empty(np.shape(v), v.dtype))  # type: ignore[union-attr]
    call_args += [values[k] for k in plan.written]  # pristine contents, restored before each sweep
    jacs = [np.empty(shape, dtype) for shape, dtype in _jacobian_shapes(plan, values)]
    plan.call(*call_args, *jacs)
    return jacs[0] if single else tuple(jacs)


def _fast_path(jc: JacrevCallable, plan: JacrevPlan, args: tuple, values: tuple) -> Callable:
    """A function for calls shaped like `args` (same marker position, same
    signature code): checks, allocation and the compiled call, or the
    general path for anything else."""
    params = [f"a{k}" for k in range(len(args))]
    env: dict[str, object] = {"call": plan.call, "empty": np.empty, "code": shadows.signature_code,
                              "overlap": shadows.arrays_overlap, "slow": jc._slow_call,
                              "CODE": shadows.signature_code(*values), "run": _run, "plan": plan,
                              "Output": Output}
    lines = [f"def fast({', '.join(params)}):", f"    v{plan.out} = a{plan.out}.value"]
    names = [f"v{k}" if k == plan.out else f"a{k}" for k in range(len(args))]
    joined = ", ".join(names)
    arrays = [n for n, v in zip(names, values) if isinstance(v, np.ndarray)]
    checks = [f"code({joined}) != CODE"]
    if len(arrays) > 1:
        checks.append(f"overlap({', '.join(arrays)})")
    from adpasses.api.aliasing import internal_overlap, strided_written

    checks += [f"internal_overlap({names[k]})" for k in strided_written(values, plan.written)]
    env["internal_overlap"] = internal_overlap
    lines += [f"    if {' or '.join(checks)}:", f"        return slow(({', '.join(params)},), {{}})"]
    call_args = []
    for k, (n, v, act) in enumerate(zip(names, values, plan.activity)):
        if k in plan.written:
            lines.append(f"    w{k} = {n}.copy()")
            call_args.append(f"w{k}")
        else:
            call_args.append(n)
        if act in ("dup", "dupnoneed"):
            env[f"dt{k}"] = v.dtype
            call_args.append(f"empty({n}.shape, dt{k})")
    call_args += [names[k] for k in plan.written]
    jacs = []
    out = names[plan.out]
    for j, k in enumerate(plan.nums):
        v = values[k]
        if isinstance(v, np.ndarray):
            env[f"jt{j}"] = v.dtype
            lines.append(f"    J{j} = empty({out}.shape + {names[k]}.shape, jt{j})")
        else:
            env[f"jt{j}"] = np.float64
            lines.append(f"    J{j} = empty({out}.shape, jt{j})")
        jacs.append(f"J{j}")
    lines.append(f"    call({', '.join(call_args + jacs)})")
    lines.append(f"    return {jacs[0]}" if jc.single else f"    return ({', '.join(jacs)},)")
    exec(compile("\n".join(lines) + "\n", f"<adpasses {jc.__name__} fast path>", "exec"), env)
    return env["fast"]  # type: ignore[return-value]


def jacobian_of_results(jf, args: tuple, argnums: int | tuple[int, ...], what: str) -> object:  # type: ignore[no-untyped-def]
    """The Jacobian of a function returning an array (or a tuple): one
    vector-Jacobian product (adpasses.api.vjp) per element of each float
    output, with a unit cotangent. For an output of shape S and an argument
    of shape A, an array of shape S + A (S for a float argument); a tuple
    over argnums when argnums is a tuple, and a tuple over the outputs when
    f returns a tuple (like jax.jacrev). Outputs that are not floats (ints)
    give None."""
    from adpasses.api.vjp import _vjp

    nums = normalize_argnums(argnums, len(args), jf.__name__)
    values = plain_arguments(jf.__name__, jf._params, args)
    for k in nums:
        v = values[k]
        if not (isinstance(v, float) or (isinstance(v, np.ndarray) and v.dtype.kind == "f")):
            raise TypeError(f"{what}: argument {k} ({jf._params[k]}) of {jf.__name__}() is "
                            f"{type(v).__name__ if not isinstance(v, np.ndarray) else f'an array of {v.dtype}'}"
                            "; only floats and float arrays can be differentiated")
    out, vjp_fn = _vjp(jf, tuple(values))
    outs = list(out) if isinstance(out, tuple) else [out]
    zero_cts: list[object] = [np.zeros(o.shape, o.dtype) if isinstance(o, np.ndarray) and o.dtype.kind == "f"
                              else 0.0 if isinstance(o, float) else None for o in outs]
    per_output = []
    for j, o in enumerate(outs):
        if zero_cts[j] is None:
            per_output.append(None)
            continue
        shape = np.shape(o)
        jacs = [np.empty(shape + np.shape(values[k]), values[k].dtype if isinstance(values[k], np.ndarray)
                         else np.float64) for k in nums]
        for idx in np.ndindex(*shape):
            cts = list(zero_cts)
            if isinstance(o, np.ndarray):
                unit = np.zeros(o.shape, o.dtype)
                unit[idx] = 1.0
                cts[j] = unit
            else:
                cts[j] = 1.0
            cot = vjp_fn(tuple(cts) if isinstance(out, tuple) else cts[0])
            for J, k in zip(jacs, nums):
                J[idx] = cot[k]
        per_output.append(jacs[0] if isinstance(argnums, int) else tuple(jacs))
    return tuple(per_output) if isinstance(out, tuple) else per_output[0]


def rebuild_jacobian(kind: str, jf, argnums, width=None):  # type: ignore[no-untyped-def]
    """The Jacobian callable a pickle refers to."""
    return jacrev(jf, argnums, width=width)
