"""Input points of a program and the functional whose gradient is checked.

Every memref argument is a view of a base buffer (`MemArg.buffer`); several
arguments on one buffer alias. A point is the contents of the buffers plus
the float arguments. The derivative being checked is that of

    L = sum_k seed_k * result_k  +  sum_b <shadow_seed_b, final contents of buffer b>

over the active results and the buffers of dup arguments (Enzyme's
semantics, as in test/gradcheck.py, but per buffer: memory that two aliased
arguments share is one set of elements, seeded once). The gradient
function must leave dL/d(initial contents) in each shadow buffer and return
dL/da for each active float argument.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from adpasses.tools.fuzz.program import FloatArg, IndexArg, MemArg, Program

MAX_MAGNITUDE = 1e6
"""Inputs whose oracle run gives larger values are rejected (overflow-prone
points make finite differences meaningless). This bounds every float the
program assigns or stores on the way (`Oracle.peak`), not only its results:
a recurrence that grows to 1e35 absorbs a perturbation of 1e-6 entirely in
`s + x`, so finite differences see a staircase while the
(correct) derivative is astronomically large."""


@dataclass
class Point:
    buffers: list[np.ndarray]
    floats: dict[str, float]
    result_seeds: list[float]
    shadow_seeds: dict[int, np.ndarray]
    """Per buffer of a dup argument."""


def dup_buffers(p: Program) -> list[int]:
    return sorted({a.buffer for a in p.args if isinstance(a, MemArg) and a.activity != "const"})


def random_point(p: Program, attempt: int) -> Point:
    rng = np.random.default_rng([p.seed, attempt])
    buffers = [rng.uniform(-1.5, 1.5, n) for n in p.buffers]
    floats = {a.name: float(rng.uniform(-1.5, 1.5)) for a in p.args if isinstance(a, FloatArg)}
    seeds = [float(rng.uniform(0.5, 1.5)) for _ in p.results]
    shadows = {b: rng.standard_normal(p.buffers[b]) for b in dup_buffers(p)}
    return Point(buffers, floats, seeds, shadows)


def view(a: MemArg, buffer: np.ndarray) -> np.ndarray:
    """The argument's view of its (1-D) buffer."""
    if not a.strided:
        return buffer.reshape(a.shape)  # C-contiguous: identity layout
    item = buffer.itemsize
    return np.lib.stride_tricks.as_strided(
        buffer[a.offset:], shape=a.shape, strides=tuple(s * item for s in a.strides))


def covered(a: MemArg) -> list[int]:
    """The buffer elements the argument's view reaches."""
    if len(a.shape) == 1:
        return [a.offset + i * a.strides[0] for i in range(a.shape[0])]
    return [a.offset + i * a.strides[0] + j * a.strides[1]
            for i in range(a.shape[0]) for j in range(a.shape[1])]


def call_args(p: Program, buffers: list[np.ndarray], floats: dict[str, float],
              shadows: list[np.ndarray] | None = None) -> list:
    """Arguments of the primal (or, with `shadows`, of the gradient without
    its trailing seeds: each dup argument followed by the same view of its
    shadow buffer)."""
    out: list = []
    for a in p.args:
        if isinstance(a, MemArg):
            out.append(view(a, buffers[a.buffer]))
            if shadows is not None and a.activity != "const":
                out.append(view(a, shadows[a.buffer]))
        elif isinstance(a, FloatArg):
            out.append(floats[a.name])
        else:
            assert isinstance(a, IndexArg)
            out.append(a.value)
    return out


def as_tuple(out: object) -> tuple:
    if out is None:
        return ()
    return tuple(out) if isinstance(out, tuple) else (out,)


@dataclass
class Evaluation:
    results: tuple[float, ...]
    buffers: list[np.ndarray]
    trace: list
    """The branch taken at every kink (to_python.Oracle)."""
    roundings: list = field(default_factory=list)
    """The residual f32(x) - x of every f32 conversion (to_python.Oracle)."""
    peak: float = 0.0
    """The largest magnitude of a float the program assigned or stored."""


def evaluate(oracle, p: Program, buffers: list[np.ndarray], floats: dict[str, float]) -> Evaluation:  # type: ignore[no-untyped-def]
    work = [b.copy() for b in buffers]
    results, trace = oracle(*call_args(p, work, floats))
    return Evaluation(tuple(float(r) for r in results), work, trace, list(oracle.roundings),
                      oracle.peak)


def magnitude_ok(ev: Evaluation) -> bool:
    values = [*ev.results, *(float(np.max(np.abs(b))) if b.size else 0.0 for b in ev.buffers),
              ev.peak]
    return all(math.isfinite(v) and abs(v) <= MAX_MAGNITUDE for v in values)


def functional(p: Program, point: Point, ev: Evaluation) -> tuple[float, float]:
    """L at an evaluation, and the sum of the magnitudes of its terms (a
    scale for the rounding error of L)."""
    total = scale = 0.0
    for r, seed, act in zip(ev.results, point.result_seeds, p.ret_activity):
        if act == "active":
            total += seed * r
            scale += abs(seed * r)
    for b, s in point.shadow_seeds.items():
        terms = s * ev.buffers[b]
        total += float(np.sum(terms))
        scale += float(np.sum(np.abs(terms)))
    return total, scale
