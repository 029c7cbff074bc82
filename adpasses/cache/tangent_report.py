"""What the tangent sweep of forward over reverse tapes.

`ad-forward` over a gradient (Hessian-vector products: docs/forward_mode.md,
"Forward over reverse") repeats every cache decision of the gradient on
tangents: a tape whose values vary along the direction gets one tangent
tape per lane, pushed and popped beside it; a tape whose values do not vary
gets none. This report lists, for one generated tangent function, each
float tape of the gradient it differentiates (read from the IR it
differentiated, with the forward activity analysis that decided it), and
for each whether tangent tapes sit beside it, how many values per call and
how many bytes: `lanes * element bytes * count`.

The tapes are recognised in the prepared copy the forward pass analysed:
`ad.tape.create` (growable tapes, and any not yet lowered), and the buffers
`ad-lower-tapes` made of the others, the only allocations at that point all
of whose accesses are `ad.unchecked` (the user's accesses and the reverse
sweep's are checked until `ad-elide-shadow-checks`, which runs after
`ad-forward`). Integer tapes never have tangents and are not listed.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from xdsl.dialects import func, memref
from xdsl.ir import Operation, SSAValue

from adpasses.cache.report import SizeExpr, _evaluate, value_location
from adpasses.core.types import byte_size, is_float_type
from adpasses.dialects.ad import UNCHECKED_ATTR, TapeCreateOp

if TYPE_CHECKING:
    from adpasses.analysis.activity import ActivityAnalysis


@dataclass
class TangentTapeEntry:
    tape: str                  # the primal tape's name (`%tape_<value>`)
    location: str | None       # the taped value's source location
    dtype: str
    element_bytes: int
    lanes: int                 # tangent tapes beside it (0: its values do not vary)
    capacity: SSAValue | None  # values per call (None: a growable tape)
    static: int | None = None
    count: int | None = None   # evaluated by `bind`
    bytes: int | None = None   # tangent bytes, evaluated by `bind`

    @property
    def count_text(self) -> str:
        if self.static is not None:
            return str(self.static)
        return SizeExpr(self.capacity).text() if self.capacity is not None else "grows"

    @property
    def bytes_text(self) -> str:
        if not self.lanes:
            return "0"
        count = self.count_text
        count = count if count.replace("_", "").isalnum() or count.startswith("(") else f"({count})"
        return f"{self.lanes}*{self.element_bytes}*{count}"


@dataclass
class TangentTapeReport:
    tangent: str               # the generated tangent function
    primal: str                # the function it differentiates (a gradient, or one calling it)
    width: int
    entries: list[TangentTapeEntry] = field(default_factory=list)
    argument_values: Sequence[SSAValue] = ()
    bound: bool = False

    @classmethod
    def of(cls, work: func.FuncOp, activity: ActivityAnalysis, tangent: str, primal: str,
           width: int) -> TangentTapeReport:
        """The float tapes of `work` (the prepared copy the forward pass
        analysed) and whether the tangent sweep tapes their tangents."""
        entries = []
        for op in work.walk():
            tape = _tape_of(op)
            if tape is None:
                continue
            element = tape.type.element_type  # type: ignore[attr-defined]  (a memref or an !ad.tape)
            if not is_float_type(element):
                continue
            capacity, static = _capacity(op)
            lanes = width if activity.is_active_memory(tape) else 0
            entries.append(TangentTapeEntry(
                tape=f"%{tape.name_hint or 'tape'}", location=_taped_location(tape), dtype=str(element),
                element_bytes=byte_size(element), lanes=lanes, capacity=capacity, static=static))
        return cls(tangent, primal, width, entries, list(work.body.block.args))

    def bind(self, args: Sequence[object]) -> TangentTapeReport:
        """Counts and bytes for these arguments of the function the tangent
        function differentiates (numpy arrays give their shapes)."""
        env = dict(zip(self.argument_values, args))
        entries = []
        for e in self.entries:
            n = e.static if e.static is not None else (
                None if e.capacity is None else _evaluate(e.capacity, env))
            n = None if n is None else int(n)
            entries.append(replace(e, count=n, bytes=None if n is None else e.lanes * e.element_bytes * n))
        return replace(self, entries=entries, bound=True)

    @property
    def tangent_taped_bytes(self) -> int | None:
        """Bytes of tangent tapes per call (bound arguments), None if unknown."""
        if self.bound and all(e.bytes is not None for e in self.entries):
            return sum(e.bytes for e in self.entries)  # type: ignore[misc]
        return None

    @property
    def tangent_taped_bytes_formula(self) -> str:
        return " + ".join(e.bytes_text for e in self.entries if e.lanes) or "0"

    def __str__(self) -> str:
        lines = [f"tangent tapes of @{self.tangent} (forward over reverse of @{self.primal}, "
                 f"width {self.width})"]
        name_width = max([len(e.tape) for e in self.entries] + [4])
        for e in self.entries:
            if e.lanes:
                amount = f"{e.dtype} x {e.lanes} lanes x {e.count_text}"
                if e.bytes is not None:
                    amount += f" = {e.bytes} bytes"
                why = "beside the primal tape: its values vary along the direction"
            else:
                amount = f"{e.dtype} x {e.count_text}"
                why = "no tangent tape: its values do not vary along the direction"
            kind = "tangent" if e.lanes else "none"
            lines.append(f"  {kind:<8} {e.tape:<{name_width}}  {amount:<28} {e.location or '?'}  {why}")
        total = self.tangent_taped_bytes
        formula = self.tangent_taped_bytes_formula
        lines.append(f"  tangent taped bytes: {formula}" if total is None else
                     f"  tangent taped bytes: {total} = {formula}")
        return "\n".join(lines)

    def to_dict(self) -> dict:
        return {
            "tangent": self.tangent, "primal": self.primal, "width": self.width,
            "entries": [{"tape": e.tape, "location": e.location, "dtype": e.dtype, "lanes": e.lanes,
                         "count": e.count if self.bound else e.count_text,
                         "bytes": e.bytes if self.bound else e.bytes_text} for e in self.entries],
            "tangent_taped_bytes": self.tangent_taped_bytes,
            "tangent_taped_bytes_formula": self.tangent_taped_bytes_formula,
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2)


def _tape_of(op: Operation) -> SSAValue | None:
    """The tape `op` creates, if it creates one."""
    if isinstance(op, TapeCreateOp):
        return op.results[0]
    if isinstance(op, (memref.AllocOp, memref.AllocaOp)):
        buffer = op.results[0]
        users = [u.operation for u in buffer.uses]
        accesses = [u for u in users if isinstance(u, (memref.LoadOp, memref.StoreOp))]
        if accesses and all(UNCHECKED_ATTR in u.attributes for u in accesses) and all(
                isinstance(u, (memref.LoadOp, memref.StoreOp, memref.DeallocOp)) for u in users):
            return buffer
    return None


def _capacity(op: Operation) -> tuple[SSAValue | None, int | None]:
    if isinstance(op, TapeCreateOp):
        return op.capacity, None
    shape = op.results[0].type.get_shape()  # type: ignore[attr-defined]
    if shape and shape[0] >= 0:
        return None, shape[0]
    return (op.dynamic_sizes[0] if op.dynamic_sizes else None), None  # type: ignore[attr-defined]


def _taped_location(tape: SSAValue) -> str | None:
    """Where the value pushed on the tape comes from (the first store's value)."""
    for use in tape.uses:
        user = use.operation
        if isinstance(user, memref.StoreOp) and user.memref is tape:
            return value_location(user.value)
        if user.name == "ad.tape.push":
            return value_location(user.operands[0])
    return None


@dataclass
class ForwardOverReverseReport:
    """The cache report of a Hessian or Hessian-vector product (forward
    over reverse): the gradient's decisions (`gradient`, a `CacheReport`)
    and what the tangent sweep tapes beside them (`tangent`)."""

    gradient: object  # CacheReport
    tangent: TangentTapeReport

    @property
    def taped_bytes(self) -> int | None:
        """Primal and tangent tape bytes per call (bound), None if unknown."""
        a, b = self.gradient.taped_bytes, self.tangent.tangent_taped_bytes  # type: ignore[attr-defined]
        return None if a is None or b is None else a + b

    @property
    def tangent_taped_bytes(self) -> int | None:
        return self.tangent.tangent_taped_bytes

    def __str__(self) -> str:
        total = self.taped_bytes
        return (f"{self.gradient}\n{self.tangent}"
                + (f"\n  taped bytes with tangents: {total}" if total is not None else ""))

    def to_dict(self) -> dict:
        return {"gradient": self.gradient.to_dict(), "tangent": self.tangent.to_dict(),  # type: ignore[attr-defined]
                "taped_bytes": self.taped_bytes}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2)
