"""The fast path of `adpasses.autodiff` calls.

The general path (`api.autodiff`) unwraps the activity markers, checks every
shadow in Python, looks the compiled gradient up and builds the result: about
10 us per call, all of it interpretation. Once a call has gone through it
with no overlapping arrays, calls of the same shape (same marker classes in
the same positions, same `return_primal`) go through a Python function
generated for that shape: it unwraps the markers by attribute, checks that
the unwrapped arguments still have the signature code the gradient was
compiled for (kinds, dtypes, ranks, C-contiguity of arrays and shadows), that
each shadow has its array's shape (and strides, for views), that no two
arrays overlap, and calls the compiled entry. Anything else returns `MISS`
and the call takes the general path, which reports errors in its own words.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from adpasses.api import shadows
from adpasses.api.markers import Active, Const

MISS = object()  # "not this fast path": the caller takes the general path


def fast_key(args: tuple, return_primal: bool) -> tuple:
    """What a fast path is registered under: the marker classes, in order."""
    return (tuple(map(type, args)), return_primal)


def make_fast_path(args: Sequence[object], activity: Sequence[str], g, return_primal: bool,  # type: ignore[no-untyped-def]
                   code: int) -> Callable | None:
    """A function `fast(args, seed)` for calls shaped like `args`, or None
    when a call of this shape cannot be checked cheaply (no signature code)."""
    if not code:
        return None
    lines = ["def fast(args, seed):", f"    {''.join(f'a{k}, ' for k in range(len(args)))}= args"]
    values: list[str] = []
    checks: list[str] = []
    arrays = 0
    for k, (a, act) in enumerate(zip(args, activity)):
        if act in ("dup", "dupnoneed"):
            lines.append(f"    v{k} = a{k}.value; s{k} = a{k}.shadow")
            values += [f"v{k}", f"s{k}"]
            # The signature code fixes dtype, rank and contiguity; the shape
            # (and the strides of a view) must match the array's.
            checks.append(f"s{k}.shape != v{k}.shape")
            if not a.value.flags.c_contiguous:  # type: ignore[attr-defined]
                checks.append(f"s{k}.strides != v{k}.strides")
            arrays += 2
        elif isinstance(a, (Active, Const)):
            lines.append(f"    v{k} = a{k}.value")
            values.append(f"v{k}")
            arrays += isinstance(a.value, np.ndarray)  # type: ignore[attr-defined]
        else:
            values.append(f"a{k}")
            arrays += isinstance(a, np.ndarray)
    joined = ", ".join(values)
    checks.insert(0, f"code({joined}) != CODE")
    if arrays > 1:
        checks.append(f"overlap({joined})")
    lines.append(f"    if {' or '.join(checks)}:")
    lines.append("        return MISS")
    seeds = ", seed" * g.ret.count("active")
    # The entry's own checks (a read-only shadow, ...) fail before any work
    # is done: the general path then explains them.
    lines += ["    try:", f"        out = call({joined}{seeds})", "    except ValueError:", "        return MISS"]
    n_primal = len(g.ret) if return_primal else 0  # a function's results: one, or a tuple of them
    n_out = n_primal + list(activity).count("active")
    outs = iter(["out"] if n_out == 1 else [f"out[{j}]" for j in range(n_out)])
    primal = "None"
    if n_primal == 1:
        primal = next(outs)
    elif n_primal > 1:
        primal = "(" + ", ".join(next(outs) for _ in range(n_primal)) + ")"
    derivs = [next(outs) if act == "active" else "None" for act in activity]
    result = f"({', '.join(derivs)},)"
    lines.append(f"    return ({result}, {primal})" if return_primal else f"    return {result}")
    env = {"call": g.call, "code": shadows.signature_code, "overlap": shadows.arrays_overlap,
           "CODE": code, "MISS": MISS}
    exec(compile("\n".join(lines) + "\n", "<adpasses autodiff fast path>", "exec"), env)
    return env["fast"]  # type: ignore[return-value]
