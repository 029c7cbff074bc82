"""Errors the user sees: one line, a source location, the construct, a remedy.

Every error that reaches a user of `ad-opt`, `ad-run` or the Python API is a
`CompileError` (or, at call time, a `TypeError`/`ValueError`/`IndexError`).
Its text starts with `file:line:col:` when the offending op carries a
location, so editors and lit tests can point at it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # xDSL is imported on first use: `import adpasses` stays cheap
    from xdsl.ir import Attribute, Operation


def location_text(loc: Attribute | None) -> str | None:
    """`file:line:col` for a location attribute, or None when unknown."""
    from xdsl.dialects.builtin import CallSiteLoc, FileLineColLoc, FusedLoc, NameLoc, UnknownLoc

    if isinstance(loc, FileLineColLoc):
        return f"{loc.filename.data}:{loc.line.data}:{loc.column.data}"
    if isinstance(loc, CallSiteLoc):
        return location_text(loc.callee) or location_text(loc.caller)
    if isinstance(loc, NameLoc):
        return location_text(loc.location)
    if isinstance(loc, FusedLoc):
        for inner in loc.locations:
            text = location_text(inner)
            if text is not None:
                return text
    if loc is None or isinstance(loc, UnknownLoc):
        return None
    return None


def op_location(op: Operation | None) -> str | None:
    """The nearest known location of `op` or of one of its ancestors."""
    while op is not None:
        text = location_text(op.location)
        if text is not None:
            return text
        op = op.parent_op()
    return None


class CompileError(Exception):
    """A user-facing compilation error with an optional source location.

    `str(err)` is `"file:line:col: error: message"` (or `"error: message"`
    when no location is known).
    """

    def __init__(
        self,
        message: str,
        *,
        op: Operation | None = None,
        location: str | None = None,
        op_name: str | None = None,
    ):
        self.message = message
        self.location = location if location is not None else op_location(op)
        self.op_name = op_name if op_name is not None else (op.name if op else None)
        super().__init__(self.format())

    def format(self) -> str:
        prefix = f"{self.location}: " if self.location else ""
        return f"{prefix}error: {self.message}"


def error_at(op: Operation, message: str) -> CompileError:
    """A `CompileError` naming `op` (its name goes into the message)."""
    return CompileError(f"'{op.name}': {message}", op=op)
