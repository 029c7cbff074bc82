"""`jacfwd(f)(*args)` for f returning a float array or a tuple of numbers
and arrays (docs/api.md): the Jacobian by forward sweeps of f's tangent
function, `width` directions per call (unit vectors of the differentiated
arguments), each lane's returned tangent one column block.

f's tangent function returns each float or float-array result and its
`width` tangents (adpasses/forward/tangent.py: the tangent of a returned
memref is that of its memory, handed to numpy with ownership like the
primal result). The Jacobian of a result of shape S with respect to an
argument of shape X has shape S + X (jax.jacfwd's); an int, bool or
int-array result has none (None). A tuple result gives a tuple per result,
each a tuple per argument when argnums is a tuple (jax's nesting).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from adpasses.api.aliasing import check_written_distinct


def jacobian_of_results(jf, values: tuple, nums: tuple[int, ...], single: bool, width: int | None,  # type: ignore[no-untyped-def]
                        api: str) -> object:
    from adpasses.api.forward import MAX_WIDTH, _cached, _compile_tangent, _key

    kinds = jf.result_kinds(values)
    rets = tuple("dup" if k == "float" or fa else "const"
                 for k, fa in zip(kinds, jf.result_float_arrays(values)))
    written = jf.written_arrays(values)
    check_written_distinct(jf, api, values)
    # Differentiated arguments get the unit directions; written float arrays
    # carry derivatives through their memory, so they are dup (zero tangents).
    activity = tuple("dup" if k in nums or (k in written and values[k].dtype.kind == "f") else "const"
                     for k in range(len(values)))
    n_max = max(values[k].size for k in nums)
    lanes = width or max(1, min(n_max, MAX_WIDTH))
    key = ("jacfwd results", _key(values), activity, rets, lanes)
    c = _cached(jf, key, lambda: _compile_tangent(jf, values, activity, rets, lanes, "jacfwd"))
    jacobians: dict[tuple[int, int], np.ndarray] = {}
    for k in nums:
        x = values[k]
        n = x.size
        for start in range(0, max(n, 1), lanes):  # (one call for an empty x: the results' shapes)
            directions = [np.zeros(x.shape, x.dtype) for _ in range(lanes)]
            for lane in range(min(lanes, n - start)):
                directions[lane].reshape(-1)[start + lane] = 1.0  # (a fresh C-order array: reshape is a view)
            flat = c.call(*_arguments(values, activity, written, k, directions, lanes))
            flat = flat if isinstance(flat, tuple) else (flat,)
            _scatter(jacobians, flat, rets, k, x, start, lanes)
    per_result = [tuple(jacobians.get((j, k)) for k in nums) if act == "dup" else None
                  for j, act in enumerate(rets)]
    shaped = [p if p is None else (p[0] if single else p) for p in per_result]
    return tuple(shaped) if len(kinds) > 1 else shaped[0]


def _arguments(values: Sequence[object], activity: tuple[str, ...], written: set[int], k: int,
               directions: list[np.ndarray], lanes: int) -> list[object]:
    """The tangent function's arguments: each value (a fresh copy of an
    array f writes: f leaves the caller's alone), then its lanes."""
    args: list[object] = []
    for q, (v, act) in enumerate(zip(values, activity)):
        args.append(np.array(v, order="K") if q in written else v)
        if act != "dup":
            continue
        if q == k:
            args += directions
        else:
            args += [np.zeros_like(v) for _ in range(lanes)]
    return args


def _scatter(jacobians: dict, flat: tuple, rets: tuple[str, ...], k: int, x: np.ndarray, start: int,
             lanes: int) -> None:
    """Each dup result's lane tangents into columns start.. of its Jacobian
    with respect to argument k."""
    it = iter(flat)
    for j, act in enumerate(rets):
        primal = next(it)
        if act != "dup":
            continue
        tangents = [next(it) for _ in range(lanes)]
        shape = np.shape(primal)
        jac = jacobians.get((j, k))
        if jac is None:
            dtype = primal.dtype if isinstance(primal, np.ndarray) else np.float64
            jac = jacobians[(j, k)] = np.zeros(shape + x.shape, dtype)
        columns = jac.reshape(shape + (x.size,))  # a view: the Jacobian is C-ordered
        for lane, t in enumerate(tangents[:x.size - start]):
            columns[..., start + lane] = t
