"""`ForwardSweeps`: the layout of a forward driver (`seed_loops.add_forward_driver`).

Kept apart from the driver's builder, which imports xDSL: the Python API
describes a driver with it before compiling, and a disk cache entry is
keyed by its `repr` (adpasses/api/forward.py), so a process that loads
compiled code from the cache never imports the compiler.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ForwardSweeps:
    """Which parameters and results of a tangent function (the output of
    `forward_differentiate`, `width` lanes) a forward driver allocates,
    seeds, restores and reads. Positions index the tangent function's
    parameters, or its results for `measured_results`.

    The driver allocates every parameter in `scratch` (lanes and shadows;
    `scratch_shape[i]` is the parameter whose sizes it takes) and loops
    over the elements `j` of each direction (an array argument whose lanes
    are seeded with unit vectors), `width` at a time: before each sweep it
    restores `restore` from pristine copies and zeroes the scratch (but
    `seed_only`), stores
    1.0 at element `j0 + l` of lane `l` of the direction; after it, copies
    lane `l` of each measured array into column `j0 + l` of its output
    (shape measured.shape + direction.shape), and lane `l` of each
    measured float result into element `j0 + l` (direction.shape).
    Elements are counted row-major: the driver indexes 1-D views of its
    scratch and of the outputs, which must be C-contiguous."""


    scratch: tuple[int, ...]                 # memref params the driver allocates (lanes, shadows)
    scratch_shape: tuple[int, ...]           # per scratch param: the param whose sizes it has
    restore: tuple[int, ...]                 # memref params restored from pristine copies
    directions: tuple[tuple[int, ...], ...]  # per direction: its lanes (scratch params)
    measured_arrays: tuple[tuple[int, ...], ...]   # per measured array: its lanes (scratch params)
    measured_results: tuple[tuple[int, ...], ...]  # per measured float: its lanes (results)
    constants: tuple[tuple[int, float], ...] = ()  # float params fixed in the driver (a seed)
    out_ranks: tuple[int, ...] = ()          # per output (per measured, per direction): its rank
    seed_only: tuple[int, ...] = ()
    """Scratch lanes the tangent function only reads (directions of arrays f
    never writes): zeroed once, and after each sweep only where it was
    seeded, rather than whole before every sweep."""

    def driver_inputs(self, n_params: int) -> list[int]:
        """The tangent function's parameters the driver takes from its
        caller, in order (then one pristine copy per `restore`, then the
        outputs: per measured, per direction)."""
        inner = set(self.scratch) | {k for k, _ in self.constants}
        return [k for k in range(n_params) if k not in inner]
