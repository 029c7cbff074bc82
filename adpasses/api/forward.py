"""Forward mode and second derivatives (JAX's names and conventions):
`jvp`, `jacfwd`, `hessian`, `hvp`, and Enzyme's `fwddiff`.

All of them compile tangent functions with the engine's
`forward_differentiate` (adpasses/transforms/forward_pass.py; the op
`ad.fwddiff`, docs/forward_mode.md):

- `jvp(f, primals, tangents)` and `fwddiff(f, Duplicated(x, dx), ...)`:
  one call of the tangent function of f.
- `hvp(f)(x, v)`: forward over reverse: the tangent, along v, of f's
  gradient (`differentiate`, then `forward_differentiate` of the gradient
  with x and its shadow `dup`): the shadow's tangent is H v.
- `jacfwd(f, argnums)`, `hessian(f, argnums)`: one forward sweep per
  `width` elements of each differentiated argument (vector mode: `width`
  tangents per sweep), all sweeps in one compiled call: a driver
  (`seed_loops.add_forward_driver`) seeds unit vectors, calls the tangent
  function and copies the lanes into columns of the result.

Like `grad`, these leave their arguments unchanged (f runs on copies of
the arrays it writes); `fwddiff`, like `autodiff`, runs f on the arrays it
is given. Each compiled variant is cached on the jitted function per
argument signature, activity and width; calls of a known shape go through
a generated function (signature code and overlap check, allocations, one
compiled call).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
import threading
from dataclasses import dataclass, field

import numpy as np

from adpasses.api import shadows
from adpasses.api.aliasing import check_written_distinct, internal_overlap, strided_written
from adpasses.api.gradcall import grad_activity, normalize_argnums
from adpasses.api.autodiff_call import MISS
from adpasses.api.markers import Active, Const, Duplicated, DuplicatedNoNeed, Output
from adpasses.core.diagnostics import CompileError, for_user
from adpasses.native.arguments import plain_arguments

MAX_WIDTH = 16
"""The widest vector mode jacfwd and hessian use by default: an argument of
n <= 16 elements takes one sweep of width n (the 3x3 strain energy: 9),
a larger one sweeps of 16."""

SHADOWED = ("dup", "dupnoneed")


def _jit(f: object):  # type: ignore[no-untyped-def]
    from adpasses.api.functions import as_jit

    return as_jit(f)


def _argnums(jf, argnums: object, api: str) -> int | tuple[int, ...]:  # type: ignore[no-untyped-def]
    from adpasses.api.functions import _checked_argnums

    return _checked_argnums(jf, argnums, api)


def _width(width: object, api: str) -> int | None:
    if width is None:
        return None
    if isinstance(width, bool) or not isinstance(width, (int, np.integer)) or width < 1:
        raise ValueError(f"{api}: width must be a positive int (tangents per sweep), got {width!r}")
    return int(width)


def _like_primal(primal: object, tangent: object) -> object:
    """A tangent laid out as the tangent function takes it: its parameter
    has the primal's layout, so the tangent of a C-contiguous array must be
    C-contiguous too (a column `V[:, j]`, a reversed view): a contiguous
    copy then; the tangent itself otherwise."""
    if (isinstance(tangent, np.ndarray) and isinstance(primal, np.ndarray)
            and primal.flags.c_contiguous and not tangent.flags.c_contiguous):
        return np.ascontiguousarray(tangent)
    return tangent


def _check_all_distinct(name: str, api: str, arrays: Sequence[object]) -> None:
    """fwddiff keeps Enzyme's semantics (as `autodiff` does: api/aliasing.py):
    its caller's tangents must share memory exactly as their arrays do, so
    arrays that share memory are refused."""
    arrays = [a for a in arrays if isinstance(a, np.ndarray)]
    if len(arrays) > 1 and shadows.arrays_overlap(*arrays):
        raise ValueError(f"{api}: arrays passed to {name}() share memory; {api.split('(')[0]} needs "
                         "distinct arrays (pass copies)")


# -- compiling ----------------------------------------------------------------------------


@dataclass
class Compiled:
    """A compiled entry (tangent function or driver) and its module."""

    call: Callable
    compiled: object  # the CompiledModule: `call`'s machine code lives as long as it
    tangent_name: str


def _compile_tangent(jf, values: tuple, activity: tuple[str, ...], ret: tuple[str, ...], width: int,  # type: ignore[no-untyped-def]
                     kind: str, driver=None, over_gradient: tuple | None = None) -> Compiled:
    """Build f for `values`, optionally differentiate it (`over_gradient`:
    (grad activity, grad ret activity), forward over reverse), take the
    tangent function for `activity`/`ret` (of f, or of its gradient) with
    `width` lanes, optionally add a driver (a `_Driver`: adds itself to the
    module and returns its name), compile.

    With `jit(cache=True)` the compiled code is a disk cache entry
    ("forward", adpasses/api/disk_cache.py) keyed by the argument
    signature, the kind, activities, width, the gradient's activities and
    the driver's layout: a later process loads it without building IR
    (and without importing xDSL)."""
    parts: tuple = ()
    if jf.cache:
        parts = (jf._disk_signature(values), kind, activity, ret, width, over_gradient,
                 driver.key if driver is not None else None)
        if jf.tape_limit is not None:
            parts += (("tape_limit", jf.tape_limit),)
        hit = jf.disk.load("forward", parts)
        if hit is not None:
            compiled, entry = hit
            jf._loaded(jf._record(kind, values, activity), compiled)
            if driver is not None:
                driver.made.update(entry["made"])
            return Compiled(compiled[entry["name"]], compiled, entry["tangent"])
    from adpasses.core.compile_locks import load_compiler

    load_compiler()  # before the first lazy import: see compile_locks (fork)
    from adpasses.native.llvm_jit import compile_module, stats

    module, entry, tangent_name, record = tangent_module(jf, values, activity, ret, width, kind, driver,
                                                         over_gradient)
    before = stats["compiled"]
    compiled = compile_module(module, boundscheck=jf.boundscheck, fastmath=jf.fastmath)
    jf._compiled(record, compiled, before)
    if jf.cache:
        jf.disk.store("forward", parts, compiled, name=entry, tangent=tangent_name,
                      made=dict(driver.made) if driver is not None else {})
    return Compiled(compiled[entry], compiled, tangent_name)


def tangent_module(jf, values: tuple, activity: tuple[str, ...], ret: tuple[str, ...], width: int,  # type: ignore[no-untyped-def]
                   kind: str, driver=None, over_gradient: tuple | None = None) -> tuple:
    """What `_compile_tangent` compiles, before compiling: (module, entry
    name, tangent function name, compile record). `vmap` adds its batch
    loop around the entry before compiling (api/vmap.py)."""
    from adpasses.api.functions import _private, function_named
    from adpasses.core.compile_locks import load_compiler

    load_compiler()  # before the first lazy import: see compile_locks (fork)
    from adpasses.frontend.signature import signature_key
    from adpasses.transforms.forward_pass import forward_differentiate

    record = jf._record(kind, values, activity)
    module, name = jf.build(values, noalias=True)
    record.stages["frontend"] = jf._frontend_s.pop(signature_key(values), 0.0)
    target = name
    if over_gradient is not None:
        from adpasses.transforms.reverse_pass import ReverseOptions, differentiate

        # Check elision runs once, at the end of forward_differentiate (docs/forward_mode.md).
        g = differentiate(module, name, list(over_gradient[0]), list(over_gradient[1]),
                          options=ReverseOptions(simplify=False, elide_checks=False), timings=record.stages)
        target = g.name
    t = forward_differentiate(module, target, list(activity), list(ret), width=width, timings=record.stages)
    entry = t.name
    if driver is not None:
        entry = driver(module, t.function)
    function_named(module, name).sym_visibility = _private()
    return module, entry, t.name, record


def _cached(jf, key: tuple, make: Callable[[], object]):  # type: ignore[no-untyped-def]
    got = jf._jacobian_plans.get(key)
    if got is None:
        from adpasses.core.compile_locks import once

        got = once(jf._jacobian_plans, key, make)
    return got


def _key(values: tuple) -> object:
    code = shadows.signature_code(*values)
    if code:
        return code
    from adpasses.frontend.signature import signature_key

    return signature_key(values)


# -- jvp ----------------------------------------------------------------------------------


def jvp(f: object, primals: Sequence[object], tangents: Sequence[object]) -> tuple[float, float]:
    """`(f(*primals), d/dt f(primals + t tangents))` like jax.jvp, for f
    returning a float, a float array or a tuple of numbers and arrays: the
    tangent has the result's structure, None for an int, bool or int-array
    result. A tangent per primal: a float for a float, an array
    of the same shape and dtype for a float array, None for an argument
    held constant (the only choice for ints, bools and int arrays).
    Arguments are left unchanged."""
    jf = _jit(f)
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError("jvp(f, primals, tangents): primals and tangents must be tuples (one entry "
                        f"per argument of {jf.__name__}()), got {type(primals).__name__} and "
                        f"{type(tangents).__name__}")
    fast = jf._jacobian_functions.get(("jvp fast", tuple(map(type, primals)), tuple(map(type, tangents))))
    if fast is not None:
        return fast(primals, tangents)
    try:
        return _jvp(jf, tuple(primals), tuple(tangents))
    except CompileError as err:
        raise for_user(err)  # the user's line and the message, not the compiler's frames


# Called inside a jitted function, jvp compiles to an ad.fwddiff (frontend/derivatives.py,
# which knows it by this mark: JVP_INTRINSIC; not imported here, the frontend imports xDSL).
jvp.__adpasses_intrinsic__ = "jvp"  # type: ignore[attr-defined]


def _tangent_activity(jf, values: tuple, tangents: tuple, api: str) -> tuple[list[str], set[int]]:  # type: ignore[no-untyped-def]
    """dup where a tangent is given (checked against its primal), and for
    float arrays f writes (derivatives flow through their memory); const
    elsewhere."""
    name = jf.__name__
    activity = []
    for k, (v, t) in enumerate(zip(values, tangents)):
        if t is None:
            activity.append("const")
            continue
        if isinstance(v, np.ndarray):
            if v.dtype.kind != "f":
                raise TypeError(f"{api}: argument {k} of {name}() is an array of {v.dtype} and cannot be "
                                "differentiated: only floats and float arrays can (give None as its tangent)")
            if not isinstance(t, np.ndarray) or t.shape != v.shape or t.dtype != v.dtype:
                what = f"shape {t.shape} and dtype {t.dtype}" if isinstance(t, np.ndarray) else type(t).__name__
                raise ValueError(f"{api}: the tangent of argument {k} of {name}() has {what}; it must be "
                                 f"an array of the primal's shape {v.shape} and dtype {v.dtype}")
        elif isinstance(v, float):
            if isinstance(t, bool) or not isinstance(t, (int, float, np.floating, np.integer)):
                raise TypeError(f"{api}: the tangent of argument {k} of {name}() (a float) must be a "
                                f"float, got {type(t).__name__}")
        else:
            raise TypeError(f"{api}: argument {k} of {name}() ({type(v).__name__}) cannot be "
                            "differentiated: only floats and float arrays can (give None as its tangent)")
        activity.append("dup")
    written = jf.written_arrays(values)
    for k in written:
        if activity[k] == "const" and values[k].dtype.kind == "f":
            activity[k] = "dup"
    return activity, written


def _float_result(jf, values: tuple, api: str, hint: str) -> None:  # type: ignore[no-untyped-def]
    if jf.return_activity(values) != ("active",):
        raise TypeError(f"{api}: {jf.__name__}() {_result_words(jf, values)}; {hint}"
                        + _reverse_for_arrays(jf, values))


def _result_words(jf, values: tuple) -> str:  # type: ignore[no-untyped-def]
    kinds = jf.result_kinds(values)
    if len(kinds) > 1:
        return "returns a tuple, not a float"
    if kinds == ("array",):
        return "returns an array, not a float"
    return "does not return a float"


def _reverse_for_arrays(jf, values: tuple) -> str:  # type: ignore[no-untyped-def]
    """Where fwddiff (or hessian) is asked about an array or tuple result:
    jvp and jacfwd differentiate those, and so does reverse mode."""
    kinds = jf.result_kinds(values)
    if "array" in kinds or len(kinds) > 1:
        return (f" (for array and tuple results: adpasses.jvp({jf.__name__}, primals, tangents) or "
                f"adpasses.jacfwd({jf.__name__}) in forward mode, adpasses.vjp({jf.__name__}) or "
                f"adpasses.jacrev({jf.__name__}) in reverse mode)")
    return ""


def _jvp(jf, primals: tuple, tangents: tuple) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    api = f"jvp({jf.__name__})"
    if len(primals) != len(tangents):
        raise ValueError(f"{api}: {len(primals)} primals but {len(tangents)} tangents; give one tangent "
                         "per primal (None for an argument held constant)")
    values = plain_arguments(jf.__name__, jf._params, jf.bind(primals))
    tangents += (None,) * (len(values) - len(tangents))  # parameters filled from defaults are constant
    jf.arg_types(values)
    kinds = jf.result_kinds(values)
    if not kinds:
        raise TypeError(f"{api}: {jf.__name__}() returns nothing; for a function writing an output array use "
                        "adpasses.fwddiff(f, Duplicated(x, dx), Duplicated(out, dout))")
    # A tangent per float and float-array result; ints, bools and int arrays have none (None).
    rets = tuple("dup" if k == "float" or fa else "const"
                 for k, fa in zip(kinds, jf.result_float_arrays(values)))
    tangents = tuple(float(t) if isinstance(values[k], float) and t is not None else t
                     for k, t in enumerate(tangents))
    activity, written = _tangent_activity(jf, values, tangents, api)
    check_written_distinct(jf, api, values, list(enumerate(tangents)))
    laid_out = tuple(_like_primal(v, t) for v, t in zip(values, tangents))
    copied = any(a is not t for a, t in zip(laid_out, tangents))
    tangents = laid_out
    key = ("jvp", _key(values), tuple(activity), rets)
    c = _cached(jf, key, lambda: _compile_tangent(jf, values, tuple(activity), rets, 1, "jvp"))
    plan = _JvpPlan(c.call, tuple(activity), tuple(sorted(written)), rets, len(kinds) > 1)
    # (the fast path unpacks one primal per parameter: not for calls leaving defaults out; it
    # returns the compiled pair as is: one float result, or one float array when f writes no
    # array, so no result can be a kept workspace buffer)
    single = kinds == ("float",) or (rets == ("dup",) and not written)
    if single and not copied and len(primals) == len(values) \
            and shadows.signature_code(*values, *[t for t in tangents if t is not None]):
        fkey = ("jvp fast", tuple(map(type, primals)), tuple(map(type, tangents)))
        jf._jacobian_functions.setdefault(fkey, _jvp_fast_path(jf, plan, values, tangents))
    return plan.run(values, tangents)


class _Workspace:
    """Where jvp copies the arrays f writes and their tangents (f must not
    change the caller's): buffers kept across calls, like the compiled
    drivers' `ad.workspace` scratch. A fresh copy of a large array costs
    its page faults on every call (a 10^6-element recurrence: 5 ms for two
    copies against 0.7 ms into kept buffers, as much as the tangent sweep's
    excess over the primal). One call at a time uses them; a concurrent
    call (another thread) copies into fresh arrays."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._buffers: list[np.ndarray] = []

    def copies(self, *arrays: np.ndarray) -> tuple[list[np.ndarray], bool]:
        """Copies of `arrays`, and whether they are the kept buffers (then
        `release` after the call)."""
        if not self._lock.acquire(blocking=False):
            return [np.array(a) for a in arrays], False
        kept = self._buffers
        if len(kept) != len(arrays) or any(b.shape != a.shape or b.dtype != a.dtype
                                           for b, a in zip(kept, arrays)):
            kept = self._buffers = [np.empty(a.shape, a.dtype) for a in arrays]
        for b, a in zip(kept, arrays):
            np.copyto(b, a)
        return kept, True

    def release(self, held: bool) -> None:
        if held:
            self._lock.release()


@dataclass
class _JvpPlan:
    call: Callable
    activity: tuple[str, ...]
    written: tuple[int, ...]
    rets: tuple[str, ...] = ("dup",)   # per result of f: dup (with a tangent) or const
    is_tuple: bool = False             # f returns a tuple
    workspace: _Workspace = field(default_factory=_Workspace)

    def run(self, values: Sequence[object], tangents: Sequence[object]) -> tuple[object, object]:
        # The arrays f writes, then the given tangents of those, into the workspace.
        sources = [values[k] for k in self.written]
        sources += [tangents[k] for k in self.written if tangents[k] is not None]
        copies, held = self.workspace.copies(*sources)  # type: ignore[arg-type]
        try:
            copy = iter(copies)
            work = {k: next(copy) for k in self.written}
            tcopy = {k: next(copy) for k in self.written if tangents[k] is not None}
            args: list[object] = []
            for k, (v, t, act) in enumerate(zip(values, tangents, self.activity)):
                args.append(work.get(k, v))
                if act == "dup":
                    args.append(np.zeros_like(v) if t is None else tcopy.get(k, t))
            flat = self.call(*args)
            if not held and self.rets == ("dup",) and not self.is_tuple:
                return flat  # (value, tangent) of one float or array result, in no kept buffer
            return self._structure(flat if isinstance(flat, tuple) else (flat,), copies if held else [])
        finally:
            self.workspace.release(held)

    def _structure(self, flat: tuple, kept: list[np.ndarray]) -> tuple[object, object]:
        """(primal out, tangent out) shaped like f's result from the
        compiled call's flat results (each primal, then its tangent if dup;
        None as the tangent of an int, bool or int-array result)."""
        values, tangents = [], []
        it = iter(flat)
        for act in self.rets:
            values.append(_own(next(it), kept))
            tangents.append(_own(next(it), kept) if act == "dup" else None)
        if self.is_tuple:
            return tuple(values), tuple(tangents)
        return values[0], tangents[0]


def _own(result: object, kept: list[np.ndarray]) -> object:
    """A result that is (a view of) a kept workspace buffer (`return x` of
    an array f writes) is copied: the next call reuses the buffer."""
    if isinstance(result, np.ndarray) and kept:
        base = result
        while isinstance(base, np.ndarray):
            if any(base is k for k in kept):
                return result.copy()
            base = base.base
    return result


def _jvp_fast_path(jf, plan: _JvpPlan, values: tuple, tangents: tuple) -> Callable:  # type: ignore[no-untyped-def]
    """`fast(primals, tangents)` for calls with these argument and tangent
    types: the signature code and overlap checked, written arrays copied,
    one compiled call; anything else takes the general path."""
    n = len(values)
    env: dict[str, object] = {"call": plan.call, "code": shadows.signature_code,
                              "overlap": shadows.arrays_overlap, "zeros_like": np.zeros_like,
                              "slow": lambda p, t: _jvp(jf, tuple(p), tuple(t))}
    given = [k for k in range(n) if tangents[k] is not None]
    p = [f"p{k}" for k in range(n)]
    t = {k: f"t{k}" for k in given}
    lines = ["def fast(primals, tangents):",
             f"    {''.join(x + ', ' for x in p)}= primals",
             f"    {''.join(f't{k}, ' if k in given else '_, ' for k in range(n))}= tangents"]
    checked = p + [t[k] for k in given]
    env["CODE"] = shadows.signature_code(*values, *[tangents[k] for k in given])
    conds = [f"code({', '.join(checked)}) != CODE"]
    arrays = [x for x, v in zip(checked, list(values) + [tangents[k] for k in given]) if isinstance(v, np.ndarray)]
    if len(arrays) > 1:
        conds.append(f"overlap({', '.join(arrays)})")
    for k in given:
        if isinstance(values[k], np.ndarray):
            conds.append(f"t{k}.shape != p{k}.shape")
    conds += [f"internal_overlap(p{k})" for k in strided_written(values, plan.written)]
    env["internal_overlap"] = internal_overlap
    lines += [f"    if {' or '.join(conds)}:", "        return slow(primals, tangents)"]
    # The arrays f writes and their tangents are copied into the plan's workspace.
    copied = [f"p{k}" for k in plan.written] + [f"t{k}" for k in plan.written if k in given]
    env["workspace"] = plan.workspace
    if copied:
        lines.append(f"    copies, held = workspace.copies({', '.join(copied)})")
        lines.append(f"    {''.join(f'w_{name}, ' for name in copied)}= copies")
    args = []
    for k, act in enumerate(plan.activity):
        args.append(f"w_p{k}" if k in plan.written else f"p{k}")
        if act == "dup":
            if k not in given:
                args.append(f"zeros_like(p{k})")
            elif k in plan.written:
                args.append(f"w_t{k}")
            else:
                args.append(f"float(t{k})" if isinstance(values[k], float) else f"t{k}")
    if copied:
        lines += ["    try:", f"        return call({', '.join(args)})", "    finally:",
                  "        workspace.release(held)"]
    else:
        lines.append(f"    return call({', '.join(args)})")
    exec(compile("\n".join(lines) + "\n", f"<adpasses jvp({jf.__name__}) fast path>", "exec"), env)
    return env["fast"]  # type: ignore[return-value]


# -- forward over reverse: hvp and hessian ------------------------------------------------


@dataclass(frozen=True)
class _GradientLayout:
    """The gradient of f for grad-like activities and, over its parameters,
    the activities of its tangent function: what `hvp` and `hessian` call."""

    grad_activity: tuple[str, ...]     # per argument of f
    ret: tuple[str, ...]               # f's results ("active",)
    fwd_activity: tuple[str, ...]      # per parameter of the gradient
    value_at: tuple[int, ...]          # per argument of f: its position among the gradient's parameters
    shadow_at: tuple[int | None, ...]  # per argument of f: its shadow's position, or None
    seeds: tuple[int, ...]             # positions of the gradient's seeds
    written: tuple[int, ...]

    @staticmethod
    def of(jf, values: tuple, nums: tuple[int, ...]) -> _GradientLayout:  # type: ignore[no-untyped-def]
        activity, written = grad_activity(jf, values, nums)
        value_at, shadow_at, fwd = [], [], []
        for k, act in enumerate(activity):
            value_at.append(len(fwd))
            # The argument's value varies along the direction when it is
            # differentiated; a written float array's contents may too.
            fwd.append("dup" if act in SHADOWED or act == "active" else "const")
            if act in SHADOWED:
                shadow_at.append(len(fwd))
                fwd.append("dup")
            else:
                shadow_at.append(None)
        seeds = tuple(range(len(fwd), len(fwd) + 1))
        fwd.append("const")
        return _GradientLayout(activity, ("active",), tuple(fwd), tuple(value_at), tuple(shadow_at), seeds,
                               tuple(sorted(written)))

    def tangent_positions(self, width: int) -> tuple[list[int], dict[int, list[int]]]:
        """Position of each gradient parameter among the tangent function's
        parameters, and of each `dup` parameter's lanes."""
        at, lanes, p = [], {}, 0
        for q, act in enumerate(self.fwd_activity):
            at.append(p)
            p += 1
            if act == "dup":
                lanes[q] = list(range(p, p + width))
                p += width
        return at, lanes


def _array_argnums(jf, values: tuple, nums: tuple[int, ...], api: str) -> None:  # type: ignore[no-untyped-def]
    for k in nums:
        v = values[k]
        if isinstance(v, np.ndarray) and v.dtype.kind != "f":
            raise TypeError(f"{api}: argument {k} of {jf.__name__}() is an array of {v.dtype} and cannot be "
                            "differentiated: only floats and float arrays can")
        if not isinstance(v, np.ndarray):
            raise TypeError(f"{api}: argument {k} of {jf.__name__}() is a {type(v).__name__}; {api.split('(')[0]} "
                            "differentiates float arrays (pass a float as a 1-element array)")


def hvp(f: object, argnums: int = 0) -> Callable:
    """`hvp(f)(*args, v)`: the Hessian of f (returning a float) with
    respect to the array argument `argnums`, times v (an array of its
    shape and dtype), by forward over reverse: the tangent along v of f's
    gradient, one sweep of each. Several vectors at once: v of shape
    `(W,) + x.shape` gives the W products (same shape), in one sweep of
    width W (vector mode). Arguments are left unchanged."""
    jf = _jit(f)
    nums = _argnums(jf, argnums, "hvp")
    if not isinstance(nums, int):
        raise TypeError(f"hvp({jf.__name__}, argnums={argnums!r}): argnums must be one int (the "
                        "array the Hessian is taken with respect to)")
    got = jf._jacobian_functions.get(("hvp", nums))
    if got is None:
        got = jf._jacobian_functions.setdefault(("hvp", nums), HvpCallable(jf, nums))
    return got


class HvpCallable:
    """The callable `hvp(f, argnums)` returns: `(*args, v) -> H v`."""

    # Called in compiled code: the request `hvp(f, argnums)(...)` (frontend/derivative_calls.py).
    __adpasses_intrinsic__ = "derivative object"
    derivative_kind = "hvp"

    def __init__(self, jf, argnum: int):  # type: ignore[no-untyped-def]
        self.jf, self.argnums = jf, argnum
        self.__name__ = f"hvp({jf.__name__})"
        self.__wrapped__ = jf.py_func
        self._fast: dict[int, Callable] = {}  # signature code of (*args, v) -> generated path

    def __repr__(self) -> str:
        return f"<adpasses.{self.__name__}>"

    def __reduce__(self) -> tuple:
        return (rebuild_forward, ("hvp", self.jf, self.argnums))

    def _cache_report(self, args: tuple):  # type: ignore[no-untyped-def]
        """`adpasses.cache_report(hvp(f), *args, v)`."""
        return forward_over_reverse_report(self, args)

    def __call__(self, *args: object) -> np.ndarray:
        code = shadows.signature_code(*args) if args else 0
        fast = self._fast.get(code) if code else None
        if fast is not None:
            return fast(*args)
        try:
            return self._slow_call(args)
        except CompileError as err:
            raise for_user(err)  # the user's line and the message, not the compiler's frames

    def _slow_call(self, args: tuple) -> np.ndarray:
        jf = self.jf
        api = self.__name__
        if not args:
            raise TypeError(f"{api}: call it as hvp(f)(*args, v): the arguments of {jf.__name__}(), then "
                            "the vector")
        *fargs, v = args
        values = plain_arguments(jf.__name__, jf._params, jf.bind(tuple(fargs)))
        jf.arg_types(values)
        (k,) = normalize_argnums(self.argnums, len(values), jf.__name__)
        _array_argnums(jf, values, (k,), api)
        _float_result(jf, values, api, "the Hessian is that of a float-valued function")
        x = values[k]
        vector = isinstance(v, np.ndarray) and v.shape == x.shape
        several = isinstance(v, np.ndarray) and v.ndim == x.ndim + 1 and v.shape[1:] == x.shape and len(v) > 0
        if not (vector or several) or v.dtype != x.dtype:  # type: ignore[union-attr]
            what = f"shape {v.shape} and dtype {v.dtype}" if isinstance(v, np.ndarray) else type(v).__name__
            raise ValueError(f"{api}: v has {what}; it must be an array of argument {k}'s shape "
                             f"{x.shape} and dtype {x.dtype} (or W such vectors, shape (W,) + {x.shape})")
        width = 1 if vector else len(v)  # type: ignore[arg-type]
        layout = _GradientLayout.of(jf, values, (k,))
        check_written_distinct(jf, api, values, [(None, v)])
        key = ("hvp", _key(values), layout.grad_activity, width)
        c = _cached(jf, key, lambda: _compile_tangent(jf, values, layout.fwd_activity, (), width, "hvp",
                                                      over_gradient=(layout.grad_activity, layout.ret)))
        run = _hvp_runner(c.call, layout, values, k, width)
        laid_out = _like_primal(x, v) if vector else v
        if laid_out is not v or (several and not v.flags.c_contiguous and x.flags.c_contiguous):  # type: ignore[union-attr]
            # (no fast path for this layout of v: it would need the copy on every call)
            return run(values, laid_out if vector else np.ascontiguousarray(v))
        code = shadows.signature_code(*args)
        # (a strided array f writes: each call's may have overlapping elements; the general path checks)
        if code and len(args) == len(jf._params) + 1 and not strided_written(values, jf.written_arrays(values)):
            arrays = [a for a in args if isinstance(a, np.ndarray)]
            shape = (lambda a: a[_k].shape) if vector else (lambda a: (width,) + a[_k].shape)
            _k = k

            def fast(*a: object, _run=run, _arrays=len(arrays) > 1, _overlap=shadows.arrays_overlap,
                     _shape=shape) -> np.ndarray:
                # The signature code fixes v's dtype and rank, not its shape.
                if a[-1].shape != _shape(a) or (_arrays and _overlap(*a)):  # type: ignore[attr-defined]
                    return self._slow_call(a)
                return _run(a[:-1], a[-1])
            self._fast.setdefault(code, fast)
        return run(values, v)


def forward_over_reverse_report(obj, args: tuple):  # type: ignore[no-untyped-def]
    """`cache_report(hessian(f), *args)` / `cache_report(hvp(f), *args, v)`:
    the gradient's cache report and what the tangent sweep tapes beside
    it (`ForwardOverReverseReport`), for these arguments; the module is
    built and differentiated as the call would, not compiled."""
    return forward_over_reverse(obj, args, f"cache_report({obj.__name__})")[0]


def forward_over_reverse(obj, args: tuple, api: str, show=None):  # type: ignore[no-untyped-def]
    """(the ForwardOverReverseReport, show(module) of the primal module
    before differentiation, the GeneratedGradient, the GeneratedTangent,
    the module holding all three) of hessian(f) / hvp(f) at `args`
    (`cache_report` and `inspect` of those objects)."""
    jf = obj.jf
    if isinstance(obj, HvpCallable):
        if not args:
            raise TypeError(f"{api}: pass the arguments of {jf.__name__}(), then the vector")
        *fargs, v = args
        values = plain_arguments(jf.__name__, jf._params, jf.bind(tuple(fargs)))
        nums = normalize_argnums(obj.argnums, len(values), jf.__name__)
        x = values[nums[0]]
        width = len(v) if isinstance(v, np.ndarray) and isinstance(x, np.ndarray) and v.ndim == x.ndim + 1 else 1
    else:
        values = plain_arguments(jf.__name__, jf._params, jf.bind(tuple(args)))
        nums = normalize_argnums(obj.argnums, len(values), jf.__name__)
        n_max = max(np.size(values[k]) for k in nums)
        width = obj.width or max(1, min(n_max, MAX_WIDTH))
    jf.arg_types(values)
    _array_argnums(jf, values, nums, api)
    _float_result(jf, values, api, "the Hessian is that of a float-valued function")
    layout = _GradientLayout.of(jf, values, nums)
    from adpasses.core.compile_locks import load_compiler

    load_compiler()
    from adpasses.cache.tangent_report import ForwardOverReverseReport
    from adpasses.transforms.forward_pass import forward_differentiate
    from adpasses.transforms.reverse_pass import ReverseOptions, differentiate

    module, name = jf.build(values, noalias=True)
    primal = show(module) if show is not None else None
    g = differentiate(module, name, list(layout.grad_activity), list(layout.ret),
                      options=ReverseOptions(simplify=False, elide_checks=False))
    t = forward_differentiate(module, g.name, list(layout.fwd_activity), [], width=width)
    params: list[object] = [1.0] * len(layout.fwd_activity)  # the seed: 1.0
    for k, v in enumerate(values):
        params[layout.value_at[k]] = v
        if layout.shadow_at[k] is not None:
            params[layout.shadow_at[k]] = v  # a shadow has its primal's shape
    report = ForwardOverReverseReport(g.cache_report.bind(values), t.tape_report.bind(params))
    return report, primal, g, t, module


def _hvp_runner(call: Callable, layout: _GradientLayout, values: tuple, k: int, width: int = 1) -> Callable:
    """`run(values, v) -> H v`: the tangent function's arguments built by
    a function generated once (copies of written arrays, zeroed shadows and
    tangents, the seed 1.0). With `width` lanes, v and the result have a
    leading dimension of `width` (lane l: row l)."""
    n = len(values)
    env: dict[str, object] = {"call": call, "zeros_like": np.zeros_like, "zeros": np.zeros}
    lines = ["def run(values, v):", f"    {''.join(f'a{j}, ' for j in range(n))}= values"]
    args: list[str] = []
    result = ""

    def lanes(name: str) -> list[str]:
        return [name] if width == 1 else [f"{name}[{lane}]" for lane in range(width)]
    for j in range(n):
        if j in layout.written:
            lines.append(f"    a{j} = a{j}.copy()")
        args.append(f"a{j}")
        if layout.fwd_activity[layout.value_at[j]] == "dup":
            if j == k:
                if j in layout.written:
                    # The sweep updates a written array's tangent in place:
                    # v is the caller's, left unchanged like the arguments.
                    lines.append("    v = v.copy()")
                args += lanes("v")
            else:
                lines.append(f"    t{j} = zeros(({width},) + a{j}.shape, a{j}.dtype)")
                args += lanes(f"t{j}") if width > 1 else [f"t{j}[0]"]
        if layout.shadow_at[j] is not None:
            lines.append(f"    s{j} = zeros_like(a{j}); h{j} = zeros(({width},) + a{j}.shape, a{j}.dtype)")
            args += [f"s{j}"] + (lanes(f"h{j}") if width > 1 else [f"h{j}[0]"])
            if j == k:
                result = f"h{j}" if width > 1 else f"h{j}[0]"
    args.append("1.0")
    lines += [f"    call({', '.join(args)})", f"    return {result}"]
    exec(compile("\n".join(lines) + "\n", "<adpasses hvp runner>", "exec"), env)
    return env["run"]  # type: ignore[return-value]


# Called in a jitted function (`hessian(f)(x)`), these compile to ad.autodiff / ad.fwddiff
# requests (frontend/derivative_calls.py knows them by this mark: GRAD_INTRINSICS).
hvp.__adpasses_intrinsic__ = "hvp"  # type: ignore[attr-defined]


def rebuild_forward(kind: str, jf, argnums, *rest):  # type: ignore[no-untyped-def]
    """The callable a pickle refers to (hvp, jacfwd, hessian)."""
    if kind == "hvp":
        return hvp(jf, argnums)
    return {"jacfwd": jacfwd, "hessian": hessian}[kind](jf, argnums, width=rest[0])


# -- jacfwd and hessian: forward sweeps in one compiled call ---------------------------------


def hessian(f: object, argnums: int | Sequence[int] = 0, *, width: int | None = None) -> Callable:
    """The Hessian of f (returning a float) with respect to array
    arguments, like jax.hessian: for one argnum an array of shape
    `x.shape + x.shape` (x's dtype); for a tuple, the nested tuple
    `H[a][b]` of shape `x_a.shape + x_b.shape`. Forward over reverse:
    the tangents of f's gradient along unit vectors, `width` of them per
    sweep (default: min(n, 16) for an argument of n elements), every
    sweep in one compiled call. Arguments are left unchanged."""
    jf = _jit(f)
    nums = _argnums(jf, argnums, "hessian")
    width = _width(width, f"hessian({jf.__name__})")
    key = ("hessian", nums, width)
    got = jf._jacobian_functions.get(key)
    if got is None:
        got = jf._jacobian_functions.setdefault(key, SweepCallable("hessian", jf, nums, width))
    return got


def jacfwd(f: object, argnums: int | Sequence[int] = 0, *, width: int | None = None) -> Callable:
    """The Jacobian by forward sweeps, like jax.jacfwd: for f returning a
    float, its gradient (x's shape per array argument); for f writing an
    array marked `Output(out)` at the call, an array of shape
    `out.shape + x.shape` per differentiated argument (a tuple when argnums
    is a tuple). `width` tangents per sweep (default min(n, 16)), every
    sweep in one compiled call. Arguments are left unchanged."""
    jf = _jit(f)
    nums = _argnums(jf, argnums, "jacfwd")
    width = _width(width, f"jacfwd({jf.__name__})")
    key = ("jacfwd", nums, width)
    got = jf._jacobian_functions.get(key)
    if got is None:
        got = jf._jacobian_functions.setdefault(key, SweepCallable("jacfwd", jf, nums, width))
    return got


hessian.__adpasses_intrinsic__ = "hessian"  # type: ignore[attr-defined]
jacfwd.__adpasses_intrinsic__ = "jacfwd"  # type: ignore[attr-defined]


@dataclass
class _SweepPlan:
    """A compiled driver and the generated function that calls it."""

    run: Callable        # run(*values) -> the result (jax's shapes), arguments unchanged
    compiled: object     # the CompiledModule: the driver's machine code lives as long as it
    out: int | None      # jacfwd: the Output argument
    body: _RunnerBody | None = None  # what `run` does, for a fast path that inlines it
    shapes: tuple | None = None      # compiled for these argument shapes (None per scalar), or any


STATIC_SHAPE_BYTES = 16 * 1024
"""A Hessian is compiled for its arguments' shapes (`static_entry`: its
lanes and shadows on the stack, every size a constant) when every array
argument and all the lanes and shadows together take at most this much:
the small fixed-size functions whose Hessians are needed millions of
times. Larger ones share one shape-generic driver per signature (a new
shape costs no compilation)."""


def _static_shapes(values: tuple, sweeps, arg_of: dict[int, int]) -> tuple | None:  # type: ignore[no-untyped-def]
    """The argument shapes a Hessian's driver is specialised on, or None
    (too large: shape-generic)."""
    arrays = [v for v in values if isinstance(v, np.ndarray)]
    scratch = sum(values[arg_of[like]].nbytes for like in sweeps.scratch_shape)
    if scratch > STATIC_SHAPE_BYTES or any(a.nbytes > STATIC_SHAPE_BYTES for a in arrays):
        return None
    return tuple(v.shape if isinstance(v, np.ndarray) else None for v in values)


class SweepCallable:
    """The callable `hessian(f, argnums)` / `jacfwd(f, argnums)` returns."""

    # Called in compiled code: the request `hessian(f, argnums)(...)` (frontend/derivative_calls.py).
    __adpasses_intrinsic__ = "derivative object"

    @property
    def derivative_kind(self) -> str:
        return self.kind

    def __init__(self, kind: str, jf, argnums: int | tuple[int, ...], width: int | None):  # type: ignore[no-untyped-def]
        self.kind, self.jf, self.argnums, self.width = kind, jf, argnums, width
        if kind == "hessian":  # adpasses.cache_report(hessian(f), *args): forward over reverse
            self._cache_report = lambda args: forward_over_reverse_report(self, args)
        self.single = isinstance(argnums, int)
        self.__name__ = f"{kind}({jf.__name__})"
        self.__wrapped__ = jf.py_func
        self._fast: dict[tuple, Callable] = {}  # marker classes of the call -> generated path
        self._dispatch = None  # calls without markers: signature code -> generated path (gradcall.install_dispatch)
        # Fast paths of plans compiled for their shapes: (signature code, shapes) -> path.
        # The dispatch table holds the first per signature code; it hands others to _other_shape.
        self._shaped: dict[tuple, Callable] = {}

    def __repr__(self) -> str:
        return f"<adpasses.{self.__name__}>"

    def __reduce__(self) -> tuple:
        return (rebuild_forward, (self.kind, self.jf, self.argnums, self.width))

    def __call__(self, *args: object) -> object:
        # Replaced, once a call without markers is compiled, by a dispatch
        # builtin (gradcall.install_dispatch) that calls the generated path
        # of the arguments' signature code; this is its fallback.
        fast = self._fast.get(tuple(map(type, args)))
        if fast is not None:
            return fast(*args)
        try:
            return self._slow_call(args)
        except CompileError as err:
            raise for_user(err)  # the user's line and the message, not the compiler's frames

    def _slow_call(self, args: tuple) -> object:
        jf = self.jf
        api = self.__name__
        marked = [k for k, a in enumerate(args) if isinstance(a, Output)]
        if len(marked) > 1:
            raise TypeError(f"{api}: Output marks {len(marked)} arguments; mark the one array whose "
                            "Jacobian you want")
        if marked and self.kind == "hessian":
            raise TypeError(f"{api}: the Hessian is that of a float-valued function; Output marks "
                            "the array a function writes its result into (jacfwd, jacrev)")
        out = marked[0] if marked else None
        unwrapped = tuple(a.value if isinstance(a, Output) else a for a in args)
        values = plain_arguments(jf.__name__, jf._params, jf.bind(unwrapped))
        jf.arg_types(values)
        nums = normalize_argnums(self.argnums, len(values), jf.__name__)
        _array_argnums(jf, values, nums, api)
        if out is None and self.kind == "jacfwd" and jf.result_kinds(values) != ("float",):
            if not jf.result_kinds(values):
                raise TypeError(f"{api}: {jf.__name__}() returns nothing; mark the array it writes its "
                                f"result into: jacfwd({jf.__name__})(..., adpasses.Output(out), ...)")
            from adpasses.api.jacfwd_results import jacobian_of_results

            return jacobian_of_results(jf, values, nums, self.single, self.width, api)
        if out is None:
            _float_result(jf, values, api, f"mark the array it writes its result into: "
                          f"{self.kind}({jf.__name__})(..., adpasses.Output(out), ...)"
                          if self.kind == "jacfwd" else "the Hessian is that of a float-valued function")
        else:
            target = values[out]
            if not isinstance(target, np.ndarray) or target.dtype.kind != "f":
                raise TypeError(f"{api}: Output marks argument {out} ({jf._params[out]}); it must be a "
                                f"float array that {jf.__name__}() writes")
            if out not in jf.written_arrays(values):
                raise ValueError(f"{api}: {jf.__name__}() never writes argument {out} "
                                 f"({jf._params[out]}), marked Output: mark the array it writes its "
                                 "result into")
        check_written_distinct(jf, api, values)
        n_max = max(values[k].size for k in nums)  # type: ignore[union-attr]
        width = self.width or max(1, min(n_max, MAX_WIDTH))
        plan = self._plan(values, nums, out, width)
        code = shadows.signature_code(*values)
        # (a strided array f writes: each call's may have overlapping elements; the general path checks)
        if len(args) == len(values) and code and not strided_written(values, jf.written_arrays(values)):
            fast = _sweep_fast_path(self, plan, values)
            if plan.shapes is not None:
                self._shaped.setdefault((code, plan.shapes), fast)
            if out is None:
                from adpasses.api.gradcall import install_dispatch

                install_dispatch(self, self._call_varargs).add(code, fast)
            else:
                self._fast.setdefault(tuple(map(type, args)), fast)
        return plan.run(*values)

    def _call_varargs(self, *args: object) -> object:
        return SweepCallable.__call__(self, *args)

    def _plan(self, values: tuple, nums: tuple[int, ...], out: int | None, width: int) -> _SweepPlan:
        jf = self.jf
        key = (self.kind, _key(values), nums, out, width, self.single)
        if self.kind == "hessian":
            layout = _GradientLayout.of(jf, values, nums)
            sweeps, arg_of = _hessian_sweeps(values, nums, layout, width)
            shapes = _static_shapes(values, sweeps, arg_of)
            return _cached(jf, key + (shapes,), lambda: _compile_hessian(jf, values, nums, layout, sweeps, arg_of,
                                                                         self.single, shapes))
        return _cached(jf, key, lambda: _compile_jacfwd(jf, values, nums, out, width, self.single))

    def _other_shape(self, *args: object) -> object:
        """The fallback of a fast path compiled for other shapes: the fast
        path of these shapes, or the general path (which makes it)."""
        fast = self._shaped.get((shadows.signature_code(*args), _shapes_of(args)))
        if fast is not None:
            return fast(*args)
        try:
            return self._slow_call(args)
        except CompileError as err:
            raise for_user(err)  # the user's line and the message, not the compiler's frames


def _shapes_of(args: tuple) -> tuple:
    return tuple(a.shape if isinstance(a, np.ndarray) else None for a in args)


class _Driver:
    """Adds the driver of `sweeps` to a module (`_compile_tangent`) and
    records in `made` what the caller needs of it (the tangent function's
    parameters it takes), which a disk cache entry keeps. `key`: what
    decides the driver's code, part of the entry's key."""

    def __init__(self, sweeps, made: dict, scratch_from_caller: bool = False):  # type: ignore[no-untyped-def]
        self.sweeps = sweeps
        self.made = made
        self.scratch_from_caller = scratch_from_caller
        self.key = repr((sweeps, scratch_from_caller))

    def __call__(self, module, tangent):  # type: ignore[no-untyped-def]
        from adpasses.transforms.seed_loops import add_forward_driver

        name = f"{tangent.sym_name.data}_sweeps"
        add_forward_driver(module, tangent, self.sweeps, name, self.scratch_from_caller)
        self.made["inputs"] = self.sweeps.driver_inputs(len(tangent.function_type.inputs.data))
        return name


_driver = _Driver


class _ShapedDriver(_Driver):
    """A `_Driver` (its scratch from its caller) and, calling it, an entry
    compiled for the arguments' shapes (`transforms/static_entry.py`): the
    constant sizes of `shapes` (per argument; None for a scalar) on its
    arrays and outputs, the lanes and shadows on its stack. Every other
    function of the module becomes private, so that LLVM inlines the
    driver and the tangent function into the entry."""

    def __init__(self, sweeps, made: dict, arg_of: dict[int, int], outputs: list[tuple[int, int]],  # type: ignore[no-untyped-def]
                 shapes: tuple):
        super().__init__(sweeps, made, scratch_from_caller=True)
        self.arg_of, self.outputs, self.shapes = arg_of, outputs, shapes
        self.key = repr((sweeps, "shaped", outputs, shapes))

    def __call__(self, module, tangent):  # type: ignore[no-untyped-def]
        from xdsl.dialects import func

        from adpasses.api.functions import _private, function_named
        from adpasses.transforms.static_entry import add_static_entry

        driver = function_named(module, super().__call__(module, tangent))
        sweeps, arg_of, shapes = self.sweeps, self.arg_of, self.shapes
        given = ([shapes[arg_of[p]] for p in self.made["inputs"]]
                 + [shapes[arg_of[p]] for p in sweeps.restore]
                 + [shapes[a] + shapes[b] for a, b in self.outputs])
        scratch = [shapes[arg_of[like]] for like in sweeps.scratch_shape]
        entry = add_static_entry(module, driver, given, scratch, f"{driver.sym_name.data}_shaped")
        for op in module.ops:
            if isinstance(op, func.FuncOp) and op.body.blocks and op is not entry:
                op.sym_visibility = _private()
        return entry.sym_name.data


def _compile_hessian(jf, values: tuple, nums: tuple[int, ...], layout: _GradientLayout,  # type: ignore[no-untyped-def]
                     sweeps, arg_of: dict[int, int], single: bool, shapes: tuple | None) -> _SweepPlan:
    """The Hessian's plan: with `shapes`, compiled for those argument shapes
    (`_static_shapes`), else for any shape of the signature."""
    made: dict = {}
    outputs = [(a, b) for a in nums for b in nums]
    driver = _driver(sweeps, made) if shapes is None else _ShapedDriver(sweeps, made, arg_of, outputs, shapes)
    width = len(sweeps.directions[0])
    c = _compile_tangent(jf, values, layout.fwd_activity, (), width, "hessian", driver,
                         over_gradient=(layout.grad_activity, layout.ret))
    inputs = [arg_of[p] for p in made["inputs"]]
    body = _RunnerBody.of(c.call, values, inputs, layout.written, outputs, _hessian_result(nums, single), shapes)
    return _SweepPlan(body.function("run", "hessian"), c.compiled, None, body, shapes)


def _hessian_result(nums: tuple[int, ...], single: bool) -> str:
    """The Hessian as the runner returns it, from its blocks H0, H1, ..."""
    return ("H0" if single else
            "(" + "".join("(" + "".join(f"H{i * len(nums) + j}, " for j in range(len(nums))) + "), "
                          for i in range(len(nums))) + ")")


def hessian_module(jf, values: tuple, nums: tuple[int, ...], width: int) -> tuple:  # type: ignore[no-untyped-def]
    """The Hessian's driver before compiling, for `vmap(hessian(f))`:
    (module, driver name, compile record, the arguments the driver takes
    in order, the written arrays (their pristine copies follow), the
    blocks (a, b) it fills, in order (then its scratch buffers follow,
    one per entry of the last element: the argument whose shape and dtype
    it has))."""
    layout = _GradientLayout.of(jf, values, nums)
    sweeps, arg_of = _hessian_sweeps(values, nums, layout, width)
    made: dict = {}
    module, entry, _, record = tangent_module(jf, values, layout.fwd_activity, (), width, "hessian",
                                              _driver(sweeps, made, scratch_from_caller=True),
                                              over_gradient=(layout.grad_activity, layout.ret))
    inputs = [arg_of[p] for p in made["inputs"]]
    scratch = [arg_of[like] for like in sweeps.scratch_shape]
    return (module, entry, record, inputs, layout.written, [(a, b) for a in nums for b in nums], scratch)


def _hessian_sweeps(values: tuple, nums: tuple[int, ...], layout: _GradientLayout, width: int) -> tuple:
    """The forward sweeps of a Hessian, and which argument each value
    parameter of the tangent function is."""
    from adpasses.transforms.sweep_layout import ForwardSweeps

    at, lanes = layout.tangent_positions(width)
    arg_of = {at[layout.value_at[k]]: k for k in range(len(values))}  # value params -> argument
    scratch, shape = [], []
    for k in range(len(values)):
        like = at[layout.value_at[k]]
        own = lanes.get(layout.value_at[k], [])
        s = layout.shadow_at[k]
        if s is not None:
            own = own + [at[s]] + lanes[s]
        scratch += own
        shape += [like] * len(own)
    sweeps = ForwardSweeps(
        scratch=tuple(scratch), scratch_shape=tuple(shape),
        restore=tuple(at[layout.value_at[k]] for k in layout.written),
        directions=tuple(tuple(lanes[layout.value_at[k]]) for k in nums),
        measured_arrays=tuple(tuple(lanes[layout.shadow_at[k]]) for k in nums),  # type: ignore[index]
        measured_results=(),
        constants=tuple((at[q], 1.0) for q in layout.seeds),
        out_ranks=tuple(values[a].ndim + values[b].ndim for a in nums for b in nums),  # type: ignore[union-attr]
        seed_only=tuple(q for k in nums if k not in layout.written for q in lanes[layout.value_at[k]]),
    )
    return sweeps, arg_of


def _compile_jacfwd(jf, values: tuple, nums: tuple[int, ...], out: int | None, width: int,  # type: ignore[no-untyped-def]
                    single: bool) -> _SweepPlan:
    from adpasses.transforms.sweep_layout import ForwardSweeps

    written = tuple(sorted(jf.written_arrays(values)))
    activity, at, lanes, p = [], [], {}, 0
    for k, v in enumerate(values):
        float_array = isinstance(v, np.ndarray) and v.dtype.kind == "f"
        act = "dup" if k in nums or (k in written and float_array) else "const"
        activity.append(act)
        at.append(p)
        p += 1
        if act == "dup":
            lanes[k] = list(range(p, p + width))
            p += width
    ret = tuple("dupnoneed" if out is None and a == "active" else "const" for a in jf.return_activity(values))
    sweeps = ForwardSweeps(
        scratch=tuple(q for k in lanes for q in lanes[k]),
        scratch_shape=tuple(at[k] for k in lanes for _ in lanes[k]),
        restore=tuple(at[k] for k in written),
        directions=tuple(tuple(lanes[k]) for k in nums),
        measured_arrays=(tuple(lanes[out]),) if out is not None else (),
        measured_results=(tuple(range(width)),) if out is None else (),
        out_ranks=tuple((values[out].ndim if out is not None else 0) + values[b].ndim for b in nums),  # type: ignore[union-attr]
        seed_only=tuple(q for k in nums if k not in written for q in lanes[k]),
    )
    made: dict = {}
    c = _compile_tangent(jf, values, tuple(activity), ret, width, "jacfwd", _driver(sweeps, made))
    arg_of = {at[k]: k for k in range(len(values))}
    inputs = [arg_of[q] for q in made["inputs"]]
    outputs = [(out, b) for b in nums] if out is not None else [(None, b) for b in nums]
    result = "H0" if single else "(" + "".join(f"H{i}, " for i in range(len(nums))) + ")"
    run = _runner(c.call, values, inputs, written, outputs, out, result, "jacfwd")
    return _SweepPlan(run, c.compiled, out)


@dataclass
class _RunnerBody:
    """What a plan's runner does, as generated source: copies of the arrays
    f writes, the results (`H<i>`: shape measured.shape + direction.shape,
    the direction's dtype; constant shapes for a plan compiled for its
    shapes), one driver call (the entry's builtin: no Python frame between)."""

    n: int            # the runner's parameters a0, a1, ...
    lines: list[str]  # the body, indented, ending with its return
    env: dict         # the names it uses

    @staticmethod
    def of(call: Callable, values: tuple, inputs: list[int], written: Sequence[int],
           outputs: list[tuple[int | None, int]], result: str, shapes: tuple | None = None) -> _RunnerBody:
        env: dict[str, object] = {"call": getattr(call, "raw", call), "empty": np.empty}
        lines = [f"    w{k} = a{k}.copy()" for k in written]
        for i, (m, d) in enumerate(outputs):
            env[f"dt{i}"] = values[d].dtype  # type: ignore[union-attr]
            if shapes is not None:
                env[f"shape{i}"] = (shapes[m] if m is not None else ()) + shapes[d]
                lines.append(f"    H{i} = empty(shape{i}, dt{i})")
            elif m is None:  # the gradient of a float function
                lines.append(f"    H{i} = empty(a{d}.shape, dt{i})")
            else:
                lines.append(f"    H{i} = empty(a{m}.shape + a{d}.shape, dt{i})")
        args = ([f"w{k}" if k in written else f"a{k}" for k in inputs] + [f"a{k}" for k in written]
                + [f"H{i}" for i in range(len(outputs))])
        lines += [f"    call({', '.join(args)})", f"    return {result}"]
        return _RunnerBody(len(values), lines, env)

    def function(self, name: str, kind: str, guard: Sequence[str] = (), env: dict | None = None) -> Callable:
        """`name(a0, a1, ...)`: the `guard` lines (which may return first), then the body."""
        scope = dict(self.env, **(env or {}))
        source = [f"def {name}({', '.join(f'a{k}' for k in range(self.n))}):", *guard, *self.lines]
        exec(compile("\n".join(source) + "\n", f"<adpasses {kind} {name}>", "exec"), scope)
        return scope[name]  # type: ignore[return-value]


def _runner(call: Callable, values: tuple, inputs: list[int], written: Sequence[int],
            outputs: list[tuple[int | None, int]], out: int | None, result: str, kind: str) -> Callable:
    """`run(a0, a1, ...)`, generated once per plan (`_RunnerBody`)."""
    return _RunnerBody.of(call, values, inputs, written, outputs, result).function("run", kind)


def _sweep_fast_path(sc: SweepCallable, plan: _SweepPlan, values: tuple) -> Callable:
    """Calls with these marker positions and signature code (and, for a plan
    compiled for its shapes, these shapes): checked, then straight to the
    plan's runner; anything else takes the general path."""
    n = len(values)
    names = [f"a{k}" for k in range(n)]
    vals = [f"v{k}" if k == plan.out else f"a{k}" for k in range(n)]
    overlap = sum(isinstance(v, np.ndarray) for v in values) > 1
    if plan.shapes is not None:
        # The dispatch builtin has matched the signature code (no markers: a
        # Hessian); other shapes of it go to their own plan.
        arrays = [k for k, s in enumerate(plan.shapes) if s is not None]
        guard = [f"    if {' or '.join(f'a{k}.shape != S{k}' for k in arrays)}:",
                 f"        return other({', '.join(names)})"] if arrays else []
        if overlap:
            guard += [f"    if overlap({', '.join(names)}):", f"        return slow(({', '.join(names)},))"]
        env = {f"S{k}": plan.shapes[k] for k in arrays}
        env.update(other=sc._other_shape, overlap=shadows.arrays_overlap, slow=sc._slow_call)
        assert plan.body is not None
        return plan.body.function("fast", f"{sc.__name__} fast path", guard, env)
    env: dict[str, object] = {"code": shadows.signature_code, "overlap": shadows.arrays_overlap,
                              "CODE": shadows.signature_code(*values), "run": plan.run,
                              "slow": sc._slow_call}
    lines = [f"def fast({', '.join(names)}):"]
    if plan.out is not None:
        lines.append(f"    v{plan.out} = a{plan.out}.value")
    if plan.out is None and not overlap:
        return plan.run  # the dispatch builtin has matched the signature code: nothing to check
    # Without markers the dispatch builtin has matched the signature code.
    conds = [f"code({', '.join(vals)}) != CODE"] if plan.out is not None else []
    if overlap:
        conds.append(f"overlap({', '.join(vals)})")
    lines += [f"    if {' or '.join(conds)}:", f"        return slow(({', '.join(names)},))",
              f"    return run({', '.join(vals)})"]
    exec(compile("\n".join(lines) + "\n", f"<adpasses {sc.__name__} fast path>", "exec"), env)
    return env["fast"]  # type: ignore[return-value]


# -- fwddiff (like Enzyme's forward mode) ----------------------------------------------------


def fwddiff(f: object, *args: object, width: int = 1, return_primal: bool = False) -> object:
    """Enzyme-style forward mode, the counterpart of `autodiff`:
    `Duplicated(x, dx)` differentiates x along dx (a float and its tangent,
    or an array and an array of its shape and dtype); `Const(v)` or a plain
    value holds an argument constant. Like Enzyme, f runs on the arrays it
    is given, and the tangent of each `Duplicated` array's final contents
    is left in its `dx` (an output array's tangent; `DuplicatedNoNeed`: the
    array's own final contents need not be right).

    Returns the tangent of f's float result (None if f returns nothing);
    with `return_primal=True`, `(tangent, value)`. `width=N`: vector mode,
    N tangents per sweep: each `dx` has a leading dimension of N (a float's
    `dx` N floats), every lane is differentiated at once, and the tangent
    returned is an array of N floats."""
    from adpasses.core.options import check_flag

    jf = _jit(f)
    api = f"fwddiff({jf.__name__})"
    width = _width(width, api) or 1
    return_primal = check_flag(return_primal, "return_primal", api)
    fast = jf._jacobian_functions.get(("fwddiff fast", tuple(map(type, args)), width, return_primal))
    if fast is not None:
        got = fast(*args)
        if got is not MISS:
            return got
    try:
        return _fwddiff(jf, args, width, return_primal)
    except CompileError as err:
        raise for_user(err)  # the user's line and the message, not the compiler's frames


def _fwddiff(jf, args: tuple, width: int, return_primal: bool) -> object:  # type: ignore[no-untyped-def]
    api = f"fwddiff({jf.__name__})"
    raw, activity, given = [], [], {}
    for k, a in enumerate(args):
        if isinstance(a, Active):
            raise TypeError(f"{api}: argument {k} is Active, a reverse-mode marker; in forward mode "
                            "give a float its tangent: Duplicated(x, dx)")
        if isinstance(a, Output):
            raise TypeError(f"{api}: argument {k} is marked Output (jacfwd, jacrev); in fwddiff give an "
                            "output array its tangent buffer: Duplicated(out, dout)")
        if isinstance(a, Duplicated):
            raw.append(a.value)
            activity.append("dupnoneed" if isinstance(a, DuplicatedNoNeed) else "dup")
            given[k] = a.shadow
        else:
            raw.append(a.value if isinstance(a, Const) else a)
            activity.append("const")
    values = plain_arguments(jf.__name__, jf._params, jf.bind(tuple(raw)))
    activity += ["const"] * (len(values) - len(activity))  # defaults filled in
    jf.arg_types(values)
    lanes: dict[int, list[object]] = {}
    for k, dx in given.items():
        x = values[k]
        if isinstance(x, np.ndarray):
            if x.dtype.kind != "f":
                raise TypeError(f"{api}: argument {k} is an array of {x.dtype} and cannot be Duplicated: "
                                "only float arrays have derivatives")
            want = x.shape if width == 1 else (width,) + x.shape
            if not isinstance(dx, np.ndarray) or dx.shape != want or dx.dtype != x.dtype:
                what = f"shape {dx.shape} and dtype {dx.dtype}" if isinstance(dx, np.ndarray) else type(dx).__name__
                raise ValueError(f"{api}: the tangent of argument {k} has {what}; it must have shape "
                                 f"{want} and dtype {x.dtype}"
                                 + (f" (width {width}: one tangent per lane, leading)" if width > 1 else ""))
            if not dx.flags.writeable:
                raise ValueError(f"{api}: the tangent of argument {k} is read-only")
            lanes[k] = [dx] if width == 1 else [dx[j] for j in range(width)]
            if x.flags.c_contiguous and not all(t.flags.c_contiguous for t in lanes[k]):
                # (a tangent buffer f's writes may update in place: not copied behind the caller's back)
                raise ValueError(f"{api}: the tangent of argument {k} is not C-contiguous (each lane), but "
                                 "its array is: the tangent function takes it with the array's layout; "
                                 "pass np.ascontiguousarray(dx)")
        elif isinstance(x, float):
            ts = [dx] if width == 1 else (list(dx) if isinstance(dx, (tuple, list, np.ndarray)) else None)
            if ts is None or len(ts) != width or any(isinstance(t, bool) or not isinstance(t, (int, float, np.floating, np.integer)) for t in ts):
                raise TypeError(f"{api}: the tangent of argument {k} (a float) must be "
                                + ("a float" if width == 1 else f"{width} floats, one per lane"))
            lanes[k] = [float(t) for t in ts]
        else:
            raise TypeError(f"{api}: argument {k} ({type(x).__name__}) cannot be Duplicated: only floats "
                            "and float arrays have derivatives")
    arrays = [v for v in values if isinstance(v, np.ndarray)] + [
        t for ts in lanes.values() for t in ts if isinstance(t, np.ndarray)]
    _check_all_distinct(jf.__name__, api, arrays)
    ret_f = jf.return_activity(values)
    kinds = jf.result_kinds(values)
    if "array" in kinds or len(kinds) > 1:
        # (the tangent of such a result was silently dropped: fwddiff returned None)
        raise TypeError(f"{api}: {jf.__name__}() {_result_words(jf, values)}; fwddiff returns the tangent "
                        "of a float result and writes the tangents of output arrays into their "
                        "Duplicated(out, dout) buffers: write the result into an output argument"
                        + _reverse_for_arrays(jf, values))
    ret = tuple(("dup" if return_primal else "dupnoneed") if a == "active" else "const" for a in ret_f)
    key = ("fwddiff", _key(values), tuple(activity), ret, width)
    c = _cached(jf, key, lambda: _compile_tangent(jf, values, tuple(activity), ret, width, "fwddiff"))
    call_args: list[object] = []
    for k, v in enumerate(values):
        call_args.append(v)
        if k in lanes:
            call_args += lanes[k]
    if len(values) == len(args) and all(isinstance(a, (Duplicated, Const)) or not isinstance(a, np.ndarray)
                                        for a in args):
        made = _fwddiff_fast_path(c.call, args, values, given, width, return_primal, ret_f)
        if made is not None:
            jf._jacobian_functions.setdefault(("fwddiff fast", tuple(map(type, args)), width, return_primal), made)
    out = c.call(*call_args)
    outs = list(out) if isinstance(out, tuple) else ([] if out is None else [out])
    if not ret_f or ret_f[0] != "active":
        return (None, outs[0] if outs else None) if return_primal else None
    value = outs.pop(0) if return_primal else None
    tangent = outs[0] if width == 1 else np.array(outs[:width])
    return (tangent, value) if return_primal else tangent


def _fwddiff_fast_path(call: Callable, args: tuple, values: tuple, given: dict, width: int,  # type: ignore[type-arg]
                       return_primal: bool, ret_f: tuple[str, ...]) -> Callable | None:
    """`fast(*args)` for fwddiff calls shaped like `args` (same marker
    classes, width, return_primal), like autodiff's: unwraps the markers,
    checks the signature code of values and tangents, the tangents' shapes
    and overlap, calls the tangent function; MISS sends anything else to
    the general path (which explains errors)."""
    code_args = list(values) + [given[k] for k in sorted(given)]
    code = shadows.signature_code(*code_args)
    if not code or any(isinstance(v, float) and width > 1 for k, v in enumerate(values) if k in given):
        return None
    n = len(args)
    env: dict[str, object] = {"call": call, "code": shadows.signature_code, "overlap": shadows.arrays_overlap,
                              "CODE": code, "MISS": MISS, "array": np.array}
    lines = ["def fast(" + ", ".join(f"a{k}" for k in range(n)) + "):"]
    vals, tans, checks, call_args = [], [], [], []
    for k, a in enumerate(args):
        if k in given:
            lines.append(f"    v{k} = a{k}.value; t{k} = a{k}.shadow")
            vals.append(f"v{k}")
            tans.append(f"t{k}")
            call_args.append(f"v{k}")
            if isinstance(values[k], np.ndarray):
                want = f"v{k}.shape" if width == 1 else f"({width},) + v{k}.shape"
                checks.append(f"t{k}.shape != {want}")
                call_args += [f"t{k}"] if width == 1 else [f"t{k}[{lane}]" for lane in range(width)]
            else:
                call_args.append(f"float(t{k})")
        elif isinstance(a, Const):
            lines.append(f"    v{k} = a{k}.value")
            vals.append(f"v{k}")
            call_args.append(f"v{k}")
        else:
            vals.append(f"a{k}")
            call_args.append(f"a{k}")
    every = ", ".join(vals + tans)
    checks.insert(0, f"code({every}) != CODE")
    if sum(isinstance(v, np.ndarray) for v in code_args) > 1:
        checks.append(f"overlap({every})")
    lines += [f"    if {' or '.join(checks)}:", "        return MISS",
              "    try:", f"        out = call({', '.join(call_args)})", "    except ValueError:",
              "        return MISS"]
    if not ret_f or ret_f[0] != "active":
        lines.append("    return (None, out)" if return_primal else "    return None")
    elif return_primal:
        lines.append("    return (out[1], out[0])" if width == 1 else
                     f"    return (array(out[1:{width + 1}]), out[0])")
    else:
        lines.append("    return out" if width == 1 else "    return array(out)")
    exec(compile("\n".join(lines) + "\n", "<adpasses fwddiff fast path>", "exec"), env)
    return env["fast"]  # type: ignore[return-value]
