"""`vjp(f)(*args)`: vector-Jacobian products of functions returning arrays
and tuples, like `jax.vjp`. See docs/api.md.

`vjp(f)(*args)` runs f and returns `(out, vjp_fn)`; `vjp_fn(cotangent)`
runs f's gradient, compiled with a seed per result: a float result is
`active` (the cotangent scales its derivative), a float array result `dup`
(the cotangent, an array of the result's shape, enters the shadow of the
returned memory: adpasses/reverse/rules/func.py), and returns one
cotangent per argument: a float for a float, an array like the argument for
a float array, None for the rest (ints, bools, int arrays). The gradient
recomputes f's forward sweep (no residuals are kept between the two calls).
Like grad, arguments are left unchanged: the arrays f writes are copied
before each call.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from adpasses.core.diagnostics import CompileError, for_user
from adpasses.native.arguments import plain_arguments


def vjp(f: object) -> Callable:
    """`vjp(f)(*args, **kwargs)` -> `(out, vjp_fn)`."""
    from adpasses.api.functions import as_jit

    jf = as_jit(f)

    def at(*args: object, **kwargs: object) -> tuple[object, Callable]:
        try:
            return _vjp(jf, jf.bind(args, kwargs))
        except CompileError as err:
            raise for_user(err)  # the user's line and the message, not the compiler's frames

    at.__name__ = f"vjp_{jf.__name__}"
    at.__doc__ = f"(out, vjp_fn) of {jf.__name__} at the given arguments (adpasses.vjp)"
    return at


def _vjp(jf, args: tuple) -> tuple[object, Callable]:  # type: ignore[no-untyped-def]
    name = jf.__name__
    values = list(plain_arguments(name, jf._params, args))
    kinds = jf.result_kinds(values)
    if not kinds:
        raise TypeError(f"vjp({name}): {name}() returns nothing: there is no output to take a "
                        "vector-Jacobian product of; to differentiate a function that writes an output "
                        "array, use adpasses.autodiff(f, ..., Duplicated(out, seed_array))")
    written = jf.written_arrays(values)
    from adpasses.api.aliasing import check_written_distinct, check_written_no_self_overlap

    check_written_no_self_overlap(name, jf._params, values, written, f"vjp({name})")
    # f runs on a copy of each array it writes, made on its own: one that
    # shares memory with another argument (`f(x, x)`) would not share it
    # with the copy, and f would compute another number than numpy's.
    check_written_distinct(jf, f"vjp({name})", values)
    out = jf(*_copies(values, written))
    outs = list(out) if len(kinds) > 1 else [out]
    rets = tuple(_ret_activity(kind, o) for kind, o in zip(kinds, outs))
    if "active" not in rets and "dup" not in rets:
        raise TypeError(f"vjp({name}): {name}() returns no float number or float array: nothing to "
                        "differentiate")
    activity = tuple(_activity(v) for v in values)
    if all(a == "const" for a in activity):
        raise TypeError(f"vjp({name}): no argument of {name}() is a float or a float array: nothing "
                        "to differentiate with respect to")
    shapes = [(o.shape, o.dtype, o.flags.c_contiguous) if isinstance(o, np.ndarray) else None for o in outs]
    frozen = [v.copy() if k in written else v for k, v in enumerate(values)]

    def vjp_fn(cotangent: object) -> tuple:
        seeds = _seeds(name, cotangent, kinds, rets, shapes)
        try:
            g = jf.gradient(frozen, activity, False, True, rets)
        except CompileError as err:
            raise for_user(err)  # the user's line and the message, not the compiler's frames
        work = _copies(frozen, written)
        call_args: list[object] = []
        grads: dict[int, np.ndarray] = {}
        for k, (v, act) in enumerate(zip(work, activity)):
            call_args.append(v)
            if act == "dup":
                grads[k] = np.zeros(v.shape, v.dtype)  # type: ignore[union-attr]
                call_args.append(grads[k])
        result = g.call(*call_args, *seeds)
        derivs = list(result) if isinstance(result, tuple) else ([] if result is None else [result])
        active = iter(derivs)
        return tuple(next(active) if act == "active" else grads.get(k) for k, act in enumerate(activity))

    vjp_fn.__name__ = f"vjp_fn_{name}"
    return out, vjp_fn


def _copies(values: Sequence[object], written: set[int]) -> list[object]:
    return [np.array(v, order="K") if k in written else v for k, v in enumerate(values)]


def _activity(value: object) -> str:
    if isinstance(value, float):
        return "active"
    if isinstance(value, np.ndarray) and value.dtype.kind == "f":
        return "dup"
    return "const"


def _ret_activity(kind: str, out: object) -> str:
    if kind == "float":
        return "active"
    if kind == "array" and isinstance(out, np.ndarray) and out.dtype.kind == "f":
        return "dup"
    return "const"


def _seeds(name: str, cotangent: object, kinds: tuple[str, ...], rets: tuple[str, ...],
           shapes: list, who: str | None = None) -> list[object]:
    """The gradient's seed operands for `cotangent`, checked against the
    output's structure (a tuple for a tuple output), shapes and dtypes.
    `who` starts the messages (default: `vjp_fn of <name>`)."""
    who = who or f"vjp_fn of {name}"
    if len(kinds) > 1:
        if not isinstance(cotangent, (tuple, list)) or len(cotangent) != len(kinds):
            raise TypeError(f"{who}: the output is a tuple of {len(kinds)} values, so the "
                            f"cotangent must be a tuple of {len(kinds)} (None for an output that is not "
                            f"differentiated), got {type(cotangent).__name__}")
        cts = list(cotangent)
    else:
        cts = [cotangent]
    seeds: list[object] = []
    for j, (ct, act, shape) in enumerate(zip(cts, rets, shapes)):
        where = f"output {j}" if len(kinds) > 1 else "the output"
        if act == "active":
            if isinstance(ct, bool) or not isinstance(ct, (int, float, np.integer, np.floating)):
                raise TypeError(f"{who}: the cotangent of {where} (a float) must be a number, "
                                f"got {type(ct).__name__}")
            seeds.append(float(ct))
        elif act == "dup":
            want_shape, dtype, contiguous = shape
            if not isinstance(ct, np.ndarray):
                raise TypeError(f"{who}: the cotangent of {where} (an array of shape "
                                f"{want_shape}) must be a numpy array, got {type(ct).__name__}")
            if ct.shape != want_shape:
                raise ValueError(f"{who}: the cotangent of {where} has shape {ct.shape}; it "
                                 f"must have the output's shape {want_shape}")
            if ct.dtype.kind != "f":
                raise TypeError(f"{who}: the cotangent of {where} has dtype {ct.dtype}; it "
                                "must be a float array")
            # The seed has the result's compiled type: its dtype, and C order
            # for a result compiled with the identity layout.
            seeds.append(np.ascontiguousarray(ct, dtype=dtype) if contiguous or ct.dtype != dtype else ct)
        elif ct is not None and not isinstance(ct, (int, float, bool, np.generic, np.ndarray)):
            raise TypeError(f"{who}: {where} is not differentiated; its cotangent must be None "
                            f"(or a number or array, ignored), got {type(ct).__name__}")
    return seeds
