"""`autodiff(f, ..., width=N)`: vector reverse mode from Python (Enzyme's
BatchDuplicated), on the engine's `ad.autodiff {width = N}`.

One forward sweep of f, then one reverse sweep carrying N cotangents
(docs/dialect.md): lane k has its own shadows and seeds and gets its own
derivatives; the primal values, tapes and partials are shared. From
Python, lane k of a `Duplicated(x, dx)` is `dx[k]` (dx has shape
`(N,) + x.shape`, the layout of `fwddiff(width=N)`), the seed of a float
result is one float for every lane or N floats, and the derivative of
an `Active` float is an array of N floats.

Arrays and shadows must not share memory here (Enzyme's rule that lets
shadows alias as their arrays do is checked for width 1 only; with lanes
it would be N such checks): a call whose arrays overlap raises ValueError.
Calls of one shape (marker classes, width, return_primal) go through a
generated fast path after the first, like `autodiff`'s (autodiff_call.py).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from adpasses.api import shadows
from adpasses.api.aliasing import internal_overlap
from adpasses.api.autodiff_call import MISS
from adpasses.api.markers import Active, Const, split_markers
from adpasses.core.options import check_flag
from adpasses.native.arguments import array_subclass_problem, is_honoured_array, plain_arguments


def check_width(width: object, api: str) -> int:
    if isinstance(width, bool) or not isinstance(width, (int, np.integer)) or width < 1:
        raise ValueError(f"{api}: width must be a positive int (cotangents per sweep), got {width!r}")
    return int(width)


def lane_seeds(seed: object, width: int, api: str) -> list[float]:
    """The seed of each lane: a real number for every lane, or `width` of them."""
    if isinstance(seed, (tuple, list, np.ndarray)):
        seeds = list(np.asarray(seed).ravel()) if isinstance(seed, np.ndarray) else list(seed)
        if isinstance(seed, np.ndarray) and seed.ndim != 1:
            raise ValueError(f"{api}: seed has shape {seed.shape}; give a float or {width} floats, one per lane")
        if len(seeds) != width:
            raise ValueError(f"{api}: {len(seeds)} seeds for width {width}; give a float (every lane) or "
                             f"{width} floats, one per lane")
    else:
        seeds = [seed] * width
    out = []
    for s in seeds:
        if isinstance(s, (bool, np.bool_)) or not isinstance(s, (int, float, np.integer, np.floating)):
            raise TypeError(f"{api}: seed must be a real number or {width} of them (one per lane), got "
                            f"{type(s).__name__} {s!r}")
        out.append(float(s))
    return out


def autodiff_lanes(jf, args: tuple, seed: object, return_primal: object, width: object) -> object:  # type: ignore[no-untyped-def]
    """`autodiff(f, *args, seed=seed, return_primal=..., width=width)`."""
    api = f"autodiff({jf.__name__}, width={width!r})"
    width = check_width(width, api)
    return_primal = check_flag(return_primal, "return_primal", api)
    key = ("autodiff lanes", tuple(map(type, args)), width, return_primal)
    fast = jf._jacobian_functions.get(key)
    if fast is not None and not isinstance(seed, (tuple, list, np.ndarray)):
        got = fast(args, seed)
        if got is not MISS:
            return got
    seeds = lane_seeds(seed, width, api)
    values, activity, given = _unwrap(jf, jf.bind(args), width, api)
    arrays = [v for v in values if isinstance(v, np.ndarray)] + list(given.values())
    if len(arrays) > 1 and shadows.arrays_overlap(*arrays):
        raise ValueError(f"{api}: arrays or shadows passed to {jf.__name__}() share memory; with width > 1 "
                         "every array and shadow must be distinct (pass copies)")
    from adpasses.api.functions import check_array_result_seeded

    check_array_result_seeded(jf, values, activity, api)
    g = jf.autodiff_gradient(values, tuple(activity), return_primal, True, width)
    call_args = _lanes_of(values, given, width) + [s for _ in range(g.ret.count("active")) for s in seeds]
    out = g.call(*call_args)
    if len(values) == len(args) and key not in jf._jacobian_functions:
        made = _fast_path(args, activity, values, given, g, return_primal, width)
        if made is not None:
            jf._jacobian_functions.setdefault(key, made)
    return _results(out, g.ret, activity[:len(args)], return_primal, width)


def _lanes_of(values: Sequence[object], given: dict[int, np.ndarray], width: int) -> list[object]:
    out: list[object] = []
    for k, v in enumerate(values):
        out.append(v)
        if k in given:
            out += [given[k][j] for j in range(width)]
    return out


def _results(out: object, ret: Sequence[str], activity: Sequence[str], return_primal: bool, width: int) -> object:
    outs = list(out) if isinstance(out, tuple) else ([] if out is None else [out])
    primal = None
    if return_primal and ret:
        primal = outs.pop(0) if len(ret) == 1 else tuple(outs.pop(0) for _ in ret)
    derivs = []
    at = 0
    for act in activity:
        if act == "active":
            derivs.append(np.array(outs[at:at + width]))
            at += width
        else:
            derivs.append(None)
    return (tuple(derivs), primal) if return_primal else tuple(derivs)


def _unwrap(jf, args: Sequence[object], width: int, api: str) -> tuple[list, list[str], dict[int, np.ndarray]]:  # type: ignore[no-untyped-def]
    """Values, activities and shadows (each of shape (width,) + x.shape)."""
    name = jf.__name__
    raw, activity, given = split_markers(args, api)
    values = list(plain_arguments(name, jf._params, raw))
    for k, dx in given.items():
        x = values[k]
        if not isinstance(x, np.ndarray) or not isinstance(dx, np.ndarray):
            raise TypeError(f"{api}: Duplicated argument {k} needs two numpy arrays")
        if x.dtype.kind != "f":
            raise TypeError(f"{api}: argument {k} is an array of {x.dtype} and cannot be Duplicated: only "
                            "float arrays have derivatives")
        if not is_honoured_array(dx):
            raise TypeError(array_subclass_problem(dx, f"{api}: the shadow of argument {k}"))
        want = (width,) + x.shape
        if dx.shape != want or dx.dtype != x.dtype:
            raise ValueError(f"{api}: the shadow of argument {k} has shape {dx.shape} and dtype {dx.dtype}; "
                             f"with width {width} it must have shape {want} (one shadow per lane, leading) "
                             f"and dtype {x.dtype}")
        if not dx.flags.writeable:
            raise ValueError(f"{api}: the shadow of argument {k} is read-only")
        if internal_overlap(dx):
            raise ValueError(f"{api}: the shadow of argument {k} has elements that share memory (a stride "
                             "of 0, or overlapping strides): each lane needs its own (np.zeros((width,) "
                             "+ x.shape))")
        if x.flags.c_contiguous and not dx.flags.c_contiguous:
            raise ValueError(f"{api}: the shadow of argument {k} is not C-contiguous while its array is: "
                             "each lane must be laid out like the array (pass np.ascontiguousarray(dx))")
    return values, activity, given


def _fast_path(args: tuple, activity: Sequence[str], values: Sequence[object], given: dict[int, np.ndarray],  # type: ignore[no-untyped-def]
               g, return_primal: bool, width: int) -> Callable | None:
    """`fast(args, seed)` for calls shaped like `args` with a float seed:
    unwraps the markers, checks the signature code of values and shadows,
    each shadow's shape (and C-contiguity, which the code fixes) and
    overlap, calls the gradient; MISS sends anything else to the general
    path (which explains errors)."""
    code_args = list(values) + [given[k] for k in sorted(given)]
    code = shadows.signature_code(*code_args)
    if not code:
        return None
    lines = ["def fast(args, seed):", f"    {''.join(f'a{k}, ' for k in range(len(args)))}= args",
             "    if type(seed) is not float:", "        return MISS"]
    vals, shads, checks, call_args = [], [], [], []
    for k, (a, act) in enumerate(zip(args, activity)):
        if k in given:
            lines.append(f"    v{k} = a{k}.value; s{k} = a{k}.shadow")
            vals.append(f"v{k}")
            shads.append(f"s{k}")
            checks.append(f"s{k}.shape != ({width},) + v{k}.shape")
            call_args += [f"v{k}"] + [f"s{k}[{j}]" for j in range(width)]
        elif isinstance(a, (Active, Const)):
            lines.append(f"    v{k} = a{k}.value")
            vals.append(f"v{k}")
            call_args.append(f"v{k}")
        else:
            vals.append(f"a{k}")
            call_args.append(f"a{k}")
    every = ", ".join(vals + shads)
    checks.insert(0, f"code({every}) != CODE")
    if sum(isinstance(v, np.ndarray) for v in code_args) > 1:
        checks.append(f"overlap({every})")
    seeds = ", seed" * (g.ret.count("active") * width)
    lines += [f"    if {' or '.join(checks)}:", "        return MISS",
              "    try:", f"        out = call({', '.join(call_args)}{seeds})", "    except ValueError:",
              "        return MISS",
              "    return results(out, RET, ACTIVITY, RETURN_PRIMAL, WIDTH)"]
    env = {"call": g.call, "code": shadows.signature_code, "overlap": shadows.arrays_overlap, "CODE": code,
           "MISS": MISS, "results": _results, "RET": tuple(g.ret), "ACTIVITY": tuple(activity[:len(args)]),
           "RETURN_PRIMAL": return_primal, "WIDTH": width}
    exec(compile("\n".join(lines) + "\n", "<adpasses autodiff width fast path>", "exec"), env)
    return env["fast"]  # type: ignore[return-value]
