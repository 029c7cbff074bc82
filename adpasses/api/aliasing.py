"""Arguments that share memory: what `grad` computes for them and which
`autodiff` calls are rejected (docs/api.md, docs/safety.md).

The per-call fast paths test overlap with the `arrays_overlap` builtin
(byte ranges: cheap, conservative) and send any call with overlapping
arrays here, to the general path, which decides with exact tests:
`np.shares_memory` between arrays, and a stride test for arrays whose own
elements share memory (a stride of 0 from `np.broadcast_to`, sliding
windows from `as_strided`).

`grad` (`grad_call`) differentiates f at the given values and leaves every
argument unchanged: the arrays f writes are copied first, and arrays that
share memory with one f writes are copied together, so that the copies
share memory exactly as the originals do and f computes what it computes
on the originals. Such a *written group* gets one shadow for the memory
it spans, every float member is differentiated through it (a member
that argnums leaves out would otherwise drop the derivatives that flow
through the shared memory), and each member's gradient is the derivative
with respect to the memory it covers. Arrays that are only read keep their
memory and get shadows of their own, laid out contiguously, so that the
gradient of an array whose elements share memory (`np.broadcast_to`) has
one entry per element, as for a copy.

`autodiff` (`check_autodiff_aliasing`) keeps Enzyme's semantics, in which
the caller's shadows must share memory exactly as their arrays do, and
rejects every call that breaks it with a ValueError naming the arguments.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

# np.shares_memory solves a small integer program; past this much work it
# gives up (TooHardError) and the arrays are taken to share memory.
_MAX_WORK = 100_000


def shares_memory(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether some element of `a` and some element of `b` have a byte in
    common (exact; "yes" when numpy gives up on a pathological layout)."""
    try:
        return bool(np.shares_memory(a, b, max_work=_MAX_WORK))
    except np.exceptions.TooHardError:
        return True


def internal_overlap(a: np.ndarray) -> bool:
    """Whether two elements of `a` may share memory: False is exact (the
    strides, sorted by size, each step over everything the smaller ones
    span); True covers a stride of 0 and overlapping strides."""
    if a.size <= 1 or a.flags.c_contiguous or a.flags.f_contiguous:
        return False
    reach = a.itemsize
    for stride, n in sorted((abs(s), n) for n, s in zip(a.shape, a.strides) if n > 1):
        if stride < reach:
            return True
        reach += stride * (n - 1)
    return False


def check_written_no_self_overlap(fname: str, params: Sequence[str], args: Sequence[object],
                                  written: set[int], api: str | None = None) -> None:
    """A written array whose elements share memory (a stride of 0, overlapping
    strides) is a ValueError for the APIs that run f on copies of the arrays
    it writes (grad, vjp, split, jvp, hessian, hvp, jacfwd, jacrev): the copy
    has distinct elements, so f would run on another array than the caller's."""
    for k in sorted(written):
        a = args[k] if k < len(args) else None
        if isinstance(a, np.ndarray) and internal_overlap(a):
            raise ValueError(
                f"{api or fname + '()'}: {_described(params, [k])} has elements that share memory (a stride of "
                f"0, as np.broadcast_to gives, or overlapping strides), and {fname} writes it: a "
                "write to one element would change others, so f at these values is not f of an "
                "array; pass a copy (np.array(x))")


def written_self_overlap(jf, values: Sequence[object], api: str | None = None) -> None:  # type: ignore[no-untyped-def]
    """`check_written_no_self_overlap` for `jf`, asking for its written
    arrays only when some array argument has overlapping elements."""
    if any(isinstance(a, np.ndarray) and internal_overlap(a) for a in values):
        check_written_no_self_overlap(jf.__name__, jf._params, values, jf.written_arrays(values), api)


def strided_written(values: Sequence[object], written: set[int]) -> list[int]:
    """The written array arguments that are not C-contiguous: a fast path
    made for their signature code (any strided layout) must check each call's
    for overlapping elements (`internal_overlap`) before skipping the checks
    of the general path; a C-contiguous one cannot have any."""
    return [k for k in sorted(written) if k < len(values) and isinstance(values[k], np.ndarray)
            and not values[k].flags.c_contiguous]  # type: ignore[union-attr]


def sharing_groups(arrays: dict[int, np.ndarray]) -> list[list[int]]:
    """Positions of the arrays grouped by shared memory (transitively),
    each group in increasing order; arrays sharing nothing are alone."""
    keys = sorted(arrays)
    parent = {k: k for k in keys}

    def root(k: int) -> int:
        while parent[k] != k:
            k = parent[k]
        return k

    for i, a in enumerate(keys):
        for b in keys[i + 1:]:
            if root(a) != root(b) and shares_memory(arrays[a], arrays[b]):
                parent[root(b)] = root(a)
    groups: dict[int, list[int]] = {}
    for k in keys:
        groups.setdefault(root(k), []).append(k)
    return list(groups.values())


def _address(a: np.ndarray) -> int:
    return a.__array_interface__["data"][0]


def _byte_span(a: np.ndarray) -> tuple[int, int]:
    """[lowest, highest + itemsize) byte addresses of a's elements."""
    data = _address(a)
    lo = data + sum(min(0, (n - 1) * s) for n, s in zip(a.shape, a.strides))
    hi = data + sum(max(0, (n - 1) * s) for n, s in zip(a.shape, a.strides)) + a.itemsize
    return lo, hi


def _described(params: Sequence[str], ks: Sequence[int]) -> str:
    names = [f"{k} ('{params[k]}')" if k < len(params) else str(k) for k in ks]
    if len(names) == 1:
        return f"argument {names[0]}"
    return "arguments " + ", ".join(names[:-1]) + " and " + names[-1]


def span_views(members: dict[int, np.ndarray], copy_contents: bool) -> dict[int, np.ndarray]:
    """Views of one new buffer, one per member, at the members' relative
    byte offsets and with their strides: they share memory exactly as the
    members do. Zeros, or (`copy_contents`) the members' values. The
    members must have one dtype, at offsets a multiple of its size."""
    first = next(iter(members.values()))
    item, dtype = first.itemsize, first.dtype
    spans = [_byte_span(a) for a in members.values()]
    lo, hi = min(s[0] for s in spans), max(s[1] for s in spans)
    flat = np.zeros((hi - lo) // item, dtype)
    views = {}
    for k, a in members.items():
        start = (_address(a) - lo) // item
        views[k] = np.lib.stride_tricks.as_strided(flat[start:], a.shape, a.strides)
        if copy_contents:
            views[k][...] = a
    return views


def _check_group_layout(fname: str, params: Sequence[str], members: dict[int, np.ndarray],
                        why: str) -> None:
    """One dtype, and element boundaries that line up: otherwise the
    memory means different numbers to different members."""
    first = next(iter(members.values()))
    lo = min(_byte_span(a)[0] for a in members.values())
    if any(a.dtype != first.dtype for a in members.values()):
        dtypes = ", ".join(str(a.dtype) for a in members.values())
        raise ValueError(f"{fname}(): {_described(params, list(members))} share memory but have "
                         f"different dtypes ({dtypes}), and {why}: the same bytes would be read as "
                         "different numbers; pass copies (np.array(x))")
    if any((_address(a) - lo) % first.itemsize for a in members.values()):
        raise ValueError(f"{fname}(): {_described(params, list(members))} share memory at offsets "
                         f"that are not a multiple of their element size, and {why}; pass copies "
                         "(np.array(x))")


# -- forward mode and Jacobians ------------------------------------------------------------


def check_written_distinct(jf, api: str, values: Sequence[object],  # type: ignore[no-untyped-def]
                           tangents: Sequence[tuple[int | None, object]] = ()) -> None:
    """jvp, jacfwd, hessian, hvp and jacrev: arrays that share memory are
    fine where none of them is written (each read-only array gets its own
    tangent or shadow, as `grad` gives each its own shadow); an overlap
    with an array f writes, or with the tangent of one (the sweep writes
    it), is a ValueError: the compiled code takes such arrays as distinct
    (`ad.noalias`), and jvp's copies of written arrays would not share
    memory as the originals do. `tangents`: (the argument a tangent
    belongs to, or None for one of no argument, such as hvp's v; the
    array)."""
    from adpasses.api import shadows

    written_self_overlap(jf, values, api)
    members = [(k, a) for k, a in enumerate(values) if isinstance(a, np.ndarray)]
    members += [(k, t) for k, t in tangents if isinstance(t, np.ndarray)]
    if len(members) < 2 or not shadows.arrays_overlap(*(a for _, a in members)):
        return
    written = jf.written_arrays(values)
    for group in sharing_groups({i: a for i, (_, a) in enumerate(members)}):
        hit = sorted({members[i][0] for i in group if members[i][0] in written})
        if len(group) > 1 and hit:
            k = hit[0]
            raise ValueError(f"{api}: arrays passed to {jf.__name__}() share memory with argument {k} "
                             f"('{jf._params[k]}'), which {jf.__name__}() writes; "
                             f"{api.split('(')[0]} needs an array it writes to share memory with no "
                             "other (pass copies: np.array(x)); arrays that are only read may share memory")


# -- grad ---------------------------------------------------------------------------------


@dataclass
class GradCall:
    """How one `grad` call runs: the arguments f runs on (copies of those
    it writes), the activities, a shadow per dup argument, and whether the
    `ad.noalias` version applies (no two arguments share memory that f
    writes)."""

    args: tuple
    activity: tuple[str, ...]
    shadows: dict[int, np.ndarray]
    noalias: bool
    grouped: set[int]
    """Dup arguments whose shadow is a view of a group's shadow (hand out copies)."""


def grad_call(fname: str, params: Sequence[str], args: tuple, activity: tuple[str, ...],
              written: set[int]) -> GradCall:
    """The general path of grad/value_and_grad (see the module docstring)."""
    arrays = {k: a for k, a in enumerate(args) if isinstance(a, np.ndarray)}
    check_written_no_self_overlap(fname, params, args, written)
    groups = sharing_groups(arrays) if written and len(arrays) > 1 else [[k] for k in arrays]
    new_args = list(args)
    new_activity = list(activity)
    shadows: dict[int, np.ndarray] = {}
    grouped: set[int] = set()
    noalias = True
    for group in groups:
        if not written.intersection(group):
            continue  # only read: f sees the caller's memory, which stays unchanged
        members = {k: arrays[k] for k in group}
        if len(group) == 1:
            new_args[group[0]] = arrays[group[0]].copy()
            continue
        noalias = False
        _check_group_layout(fname, params, members, f"{fname} writes "
                            f"{_described(params, sorted(written.intersection(group)))}")
        for k, view in span_views(members, copy_contents=True).items():
            new_args[k] = view
        if members[group[0]].dtype.kind == "f":
            for k, view in span_views(members, copy_contents=False).items():
                new_activity[k] = "dup"
                shadows[k] = view
                grouped.add(k)
    for k, act in enumerate(new_activity):
        if act == "dup" and k not in shadows:
            shadows[k] = np.zeros(args[k].shape, args[k].dtype)  # type: ignore[union-attr]
    return GradCall(tuple(new_args), tuple(new_activity), shadows, noalias, grouped)


# -- autodiff -----------------------------------------------------------------------------


def check_shadow_layout(fname: str, params: Sequence[str], k: int, x: np.ndarray, dx: np.ndarray) -> None:
    """A shadow whose elements share memory must be laid out exactly like
    its array (Enzyme's rule: derivatives of elements that are one memory
    location add up there); otherwise derivatives of distinct elements
    would land in one place and all but one would be lost or mixed."""
    if not dx.flags.c_contiguous and dx.strides != x.strides and internal_overlap(dx):
        raise ValueError(f"{fname}(): the shadow of {_described(params, [k])} has elements that "
                         f"share memory (a stride of 0, or overlapping strides) and is not laid out "
                         f"like its array (strides {dx.strides} and {x.strides} bytes): derivatives "
                         "of different elements would land in one place; pass a shadow with "
                         "distinct elements (np.zeros_like(x))")


def check_written_self_overlap(fname: str, params: Sequence[str], shadows: dict[int, np.ndarray],
                               values: Sequence[object], written: set[int]) -> None:
    """An array f writes whose elements share memory: a write to one
    element changes others, and only a shadow laid out exactly like it
    (the same cells shared) carries the derivatives the same way."""
    for k, dx in shadows.items():
        x = values[k]
        assert isinstance(x, np.ndarray)
        if k in written and dx.strides != x.strides and internal_overlap(x):
            raise ValueError(f"{fname}(): {_described(params, [k])} has elements that share memory "
                             f"(a stride of 0, or overlapping strides) and {fname} writes it, but its "
                             "shadow is laid out differently: pass a shadow with the array's strides "
                             "(the same elements shared), or a copy of the array (np.array(x))")


def _mirrors(x_i: np.ndarray, dx_i: np.ndarray, x_j: np.ndarray, dx_j: np.ndarray) -> bool:
    """Whether the shadows are placed relative to each other exactly as
    their arrays are (same strides, same distance between first elements)."""
    return (dx_i.strides == x_i.strides and dx_j.strides == x_j.strides
            and _address(dx_i) - _address(dx_j) == _address(x_i) - _address(x_j))


def check_autodiff_aliasing(fname: str, params: Sequence[str], values: Sequence[object],
                            activity: Sequence[str], shadows: dict[int, np.ndarray],
                            written: set[int]) -> None:
    """ValueError naming the arguments for an autodiff call whose shadows
    do not share memory the way their arrays do (Enzyme's rule), or whose
    constant arrays share memory with differentiated ones that f writes."""
    arrays = {k: v for k, v in enumerate(values) if isinstance(v, np.ndarray)}
    dup = sorted(shadows)
    const = [k for k in arrays if k not in shadows]
    for k in dup:
        dx = shadows[k]
        for j, other in arrays.items():
            if shares_memory(dx, other):
                what = ("the array itself (Duplicated(x, x))" if j == k
                        else f"{_described(params, [j])}, an array of the call")
                raise ValueError(f"{fname}(): the shadow of {_described(params, [k])} shares memory "
                                 f"with {what}: the gradient would overwrite values f reads; pass "
                                 "a separate array (np.zeros_like(x))")
    for i, k in enumerate(dup):
        for j in dup[i + 1:]:
            same_memory = shares_memory(arrays[k], arrays[j])
            shadows_share = shares_memory(shadows[k], shadows[j])
            mirrored = _mirrors(arrays[k], shadows[k], arrays[j], shadows[j])
            pair = _described(params, [k, j])
            if shadows_share and not (same_memory and mirrored):
                raise ValueError(
                    f"{fname}(): the shadows of {pair} share memory, but "
                    + ("the arrays do not" if not same_memory else "not the way the arrays do")
                    + ": shadows must share memory exactly as their arrays do (Enzyme's rule); "
                    "pass separate shadows, or views of one shadow taken like the arrays' views")
            if same_memory and written.intersection((k, j)) and not mirrored:
                raise ValueError(
                    f"{fname}(): {pair} share memory and {fname} writes "
                    f"{_described(params, sorted(written.intersection((k, j))))}, so their shadows "
                    "must share memory the same way (derivatives flow through the shared memory): "
                    "pass views of one shadow taken like the arrays' views, e.g. "
                    "Duplicated(w[1:], dw[1:]), Duplicated(w[:-1], dw[:-1])")
    for c in const:
        for k in dup:
            if (c in written or k in written) and shares_memory(arrays[c], arrays[k]):
                raise ValueError(
                    f"{fname}(): {_described(params, [c])} is constant but shares memory with "
                    f"{_described(params, [k])}, which is Duplicated, and {fname} writes "
                    f"{_described(params, sorted(written.intersection((c, k))))}: the derivatives "
                    "that flow through the shared memory would be lost; pass it as Duplicated "
                    "with a view of the same shadow (Duplicated(w[1:], dw[1:]))")
