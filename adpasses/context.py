"""The xDSL context every tool of adpasses uses, and MLIR text parsing.

`make_context()` is the one dialect registry of adpasses: `ad-opt`, `ad-run`,
`compile_module` and `parse_module` all parse with it, so they accept the
same inputs. It loads builtin, func, arith (plus our `arith.remf`), math,
memref, scf, cf, llvm, printf and our `ad` dialect, and registers every other
dialect xDSL knows (affine, ub, vector, ...; loaded the first time the
parser meets one of its ops). What the passes and the LLVM lowering then
accept is their business: an op they cannot handle is an error at its
location, never a parse failure in one tool and not another. `parse_module()` gives
every op that has no explicit `loc(...)` the `file:line:col` where its text
starts, as mlir-opt does, so that diagnostics and cache reports can point
at the source.
"""

from __future__ import annotations

import bisect

from xdsl.context import Context
from xdsl.dialects import arith, builtin, cf, func, llvm, math, memref, printf, scf
from xdsl.dialects.builtin import FileLineColLoc, IntAttr, ModuleOp, StringAttr, UnknownLoc
from xdsl.ir import Operation
from xdsl.parser import Parser
from xdsl.utils.exceptions import ParseError, VerifyException

from adpasses.diagnostics import CompileError
from adpasses.literals import check_literals


_OTHER_DIALECTS: dict | None = None


def _other_dialects() -> dict:
    """Name -> factory of every dialect xDSL (and its plugins) provides;
    computed once per process (about 0.1 s)."""
    global _OTHER_DIALECTS
    if _OTHER_DIALECTS is None:
        from xdsl.universe import Universe

        _OTHER_DIALECTS = dict(Universe.get_multiverse().all_dialects)
    return _OTHER_DIALECTS


def make_context(allow_unregistered: bool = False) -> Context:
    """A fresh context with every dialect adpasses reads or writes loaded,
    and every other xDSL dialect registered (the one registry of all tools)."""
    from adpasses.dialects.ad import AD
    from adpasses.dialects.arith_ext import RemFOp

    ctx = Context(allow_unregistered=allow_unregistered)
    for dialect in (
        builtin.Builtin,
        func.Func,
        arith.Arith,
        math.Math,
        memref.MemRef,
        scf.Scf,
        cf.Cf,
        llvm.LLVM,
        printf.Printf,
        AD,
    ):
        ctx.load_dialect(dialect)
    ctx.load_op(RemFOp)
    known = set(ctx.registered_dialect_names)
    for name, factory in _other_dialects().items():
        if name not in known:
            ctx.register_dialect(name, factory)
    return ctx


_SHARED: Context | None = None


def shared_context() -> Context:
    """One context per process for in-process work (folding, building IR);
    creating a context loads every dialect, so it is made once."""
    global _SHARED
    if _SHARED is None:
        _SHARED = make_context()
    return _SHARED


class LocatingParser(Parser):
    """An xDSL parser that records `file:line:col` on ops without `loc(...)`."""

    def __init__(self, ctx: Context, text: str, name: str, line_offset: int = 0):
        super().__init__(ctx, text, name)
        self._file_name = StringAttr(name)
        self._line_offset = line_offset
        self._newlines = [i for i, c in enumerate(text) if c == "\n"]

    def _line_col(self, pos: int) -> tuple[int, int]:
        line = bisect.bisect_left(self._newlines, pos)
        start = self._newlines[line - 1] + 1 if line > 0 else 0
        return line + 1 + self._line_offset, pos - start + 1

    def parse_operation(self) -> Operation:
        start = self._current_token.span.start
        try:
            op = super().parse_operation()
        except VerifyException as err:
            # An attribute that does not verify (an i64 literal out of
            # range, ...): xDSL raises it without a position.
            line, col = self._line_col(start)
            text = str(err).strip().splitlines()[0] if str(err).strip() else "invalid attribute"
            raise CompileError(text, location=f"{self._file_name.data}:{line}:{col}") from None
        if isinstance(op.location, UnknownLoc):
            line, col = self._line_col(start)
            op.location = FileLineColLoc(self._file_name, IntAttr(line), IntAttr(col))
        check_literals(op)
        return op


def parse_module(
    text: str,
    name: str = "<input>",
    ctx: Context | None = None,
    line_offset: int = 0,
) -> ModuleOp:
    """Parse MLIR text; a syntax error becomes a `CompileError` at its place."""
    ctx = ctx or make_context()
    try:
        return LocatingParser(ctx, text, name, line_offset).parse_module()
    except ParseError as err:
        loc = err.span.get_location()
        raise CompileError(
            parse_error_message(err), location=f"{loc.file}:{loc.line + line_offset}:{loc.col}"
        ) from err


def parse_error_message(err: ParseError) -> str:
    """The first line of xDSL's message, without its source excerpt."""
    return err.msg.strip().splitlines()[0] if err.msg.strip() else "syntax error"
