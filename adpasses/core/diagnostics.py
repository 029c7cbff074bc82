"""Errors the user sees: one line, a source location, the construct, a remedy.

Every error that reaches a user of `ad-opt`, `ad-run` or the Python API is a
`CompileError` (or, at call time, a `TypeError`/`ValueError`/`IndexError`).
Its text starts with `file:line:col:` when the offending op carries a
location, so editors and lit tests can point at it.
"""

from __future__ import annotations

import linecache
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


def user_op_name(op: Operation) -> str:
    """The op's name as the user wrote it: an op of an unregistered dialect
    (parsed with --allow-unregistered-dialect) is xDSL's
    `builtin.unregistered` holding its real name."""
    from xdsl.dialects.builtin import UnregisteredOp

    if isinstance(op, UnregisteredOp):
        return op.op_name.data
    return op.name


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
        end: tuple[int, int] | None = None,
    ):
        self.message = message
        self.location = location if location is not None else op_location(op)
        self.op_name = op_name if op_name is not None else (user_op_name(op) if op else None)
        self.end = end  # (line, col), 1-based, exclusive: where the construct ends, when known
        super().__init__(self.format())

    def format(self) -> str:
        prefix = f"{self.location}: " if self.location else ""
        return f"{prefix}error: {self.message}"


# Raised through the API as `adpasses.CompileError` (its public name).
CompileError.__module__ = "adpasses"


def error_at(op: Operation, message: str) -> CompileError:
    """A `CompileError` naming `op` (its name goes into the message)."""
    return CompileError(f"'{user_op_name(op)}': {message}", op=op)


def for_user(err: CompileError) -> CompileError:
    """`err` as the API raises it (`raise for_user(err)` in an `except
    CompileError`): without the compiler's frames (the message and
    the user's own line are what matter; the frames would be ~90 lines of
    adpasses internals before them), and with a note that shows the source
    line and marks the construct, as Python shows a SyntaxError. An internal
    error keeps its cause (a bug of ours: its stack is what to report)."""
    if not getattr(err, "_for_user", False):
        err._for_user = True  # type: ignore[attr-defined]
        note = source_note(err.location, err.end)
        if note is not None:
            err.add_note(note)
    err.__suppress_context__ = True
    return err.with_traceback(None)


def source_note(location: str | None, end: tuple[int, int] | None = None) -> str | None:
    """`  File "f.py", line 7` and the source line with `^^^` under the
    construct (from `location` = `file:line:col` to `end`), or None when the
    file cannot be read (MLIR text given as a string, a REPL)."""
    if not location or location.count(":") < 2:
        return None
    path, line_text, col_text = location.rsplit(":", 2)
    if not (line_text.isdigit() and col_text.isdigit()):
        return None
    line, col = int(line_text), int(col_text)
    code = linecache.getline(path, line).rstrip("\r\n").expandtabs()
    if not code.strip():
        return None
    body = code.lstrip()
    indent = len(code) - len(body)
    start = max(col - 1 - indent, 0)
    if end is not None and end[0] == line:
        stop = end[1] - 1 - indent
    else:
        stop = len(body.rstrip())  # a construct that goes on over the next lines
    carets = "^" * max(stop - start, 1)
    return f'  File "{path}", line {line}\n    {body.rstrip()}\n    {" " * start}{carets}'
