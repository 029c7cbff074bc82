"""Statements with an effect beyond the values they compute: `raise` and
`assert`.

`raise ValueError("msg")` and `assert cond, "msg"` are `cf.assert %ok,
"msg"` with `ad.raises = "ValueError"` (AssertionError for assert): the
lowering stops the call through the error slot, as a failed bounds check
does, and Python raises that exception with the message and the Python
location (`ValueError: msg (at file.py:12:9)`). The exception class must
be a builtin one and the message a constant string (or an f-string
without placeholders); `assert cond` without a message says
`assert <cond>`. The rest of a block after a `raise` is never run and is
not compiled; a branch that always raises does not define the variables
after the `if` (the other branch does: `if x > 0: y = ... else: raise`).
"""

from __future__ import annotations

import ast

from xdsl.dialects import cf
from xdsl.dialects.builtin import FloatAttr, IntegerAttr, StringAttr
from xdsl.ir import Block

from adpasses.core.stop_codes import raisable
from adpasses.dialects.ad import RAISES_ATTR
from adpasses.frontend.values import PyObject, Scalar


class Raised:
    """What the statements of a block that always raises return (instead
    of a value): `returning_if` takes the other branch's value."""


RAISED = Raised()


def always_raises(stmts: list[ast.stmt]) -> bool:
    """Every path through `stmts` ends in a `raise` (or `assert False`)."""
    for stmt in stmts:
        if isinstance(stmt, ast.Raise):
            return True
        if isinstance(stmt, ast.Assert) and isinstance(stmt.test, ast.Constant) and not stmt.test.value:
            return True
        if isinstance(stmt, ast.If) and stmt.orelse and always_raises(stmt.body) \
                and always_raises(stmt.orelse):
            return True
    return False


class EffectMixin:
    # -- raise / assert --------------------------------------------------------------

    def stmt_Raise(self, stmt: ast.Raise) -> None:
        if stmt.exc is None:
            self.error(stmt, "a bare raise re-raises the exception being handled, and compiled code "
                             "handles none; raise an exception: raise ValueError(\"...\")")
        if stmt.cause is not None and not (isinstance(stmt.cause, ast.Constant) and stmt.cause.value is None):
            self.error(stmt.cause, "raise ... from an exception is not supported in compiled code; "
                                   "remove `from ...`")
        exc, args = stmt.exc, []
        if isinstance(exc, ast.Call):
            if exc.keywords or len(exc.args) > 1:
                self.error(exc, "the exception takes one message here: raise ValueError(\"...\")")
            exc, args = exc.func, exc.args
        name = self.exception_class(exc)
        message = self.constant_message(args[0]) if args else ""
        self.emit_assert(Scalar(self.const_bool(False)), name, message)

    def stmt_Assert(self, stmt: ast.Assert) -> None:
        message = (self.constant_message(stmt.msg) if stmt.msg is not None
                   else f"assert {ast.unparse(stmt.test)}")
        ok = self.to_bool(self.scalar(stmt.test))
        self.emit_assert(Scalar(ok), "AssertionError", message)

    def emit_assert(self, ok: Scalar, exception_class: str, message: str) -> None:
        op = cf.AssertOp(ok.value, StringAttr(message))
        op.attributes[RAISES_ATTR] = StringAttr(exception_class)
        self.emit(op)

    def exception_class(self, node: ast.expr) -> str:
        """The name of the builtin exception class `node` names."""
        value = self.expr(node)
        cls = value.obj if isinstance(value, PyObject) else None
        if not isinstance(cls, type) or raisable(cls.__name__) is not cls:
            self.error(node, "compiled code can raise the builtin exception classes (ValueError, "
                             "RuntimeError, ArithmeticError, ...) with a constant message: "
                             "raise ValueError(\"...\")")
        return cls.__name__

    def constant_message(self, node: ast.expr) -> str:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        if isinstance(node, ast.JoinedStr) and all(isinstance(v, ast.Constant) for v in node.values):
            return "".join(str(v.value) for v in node.values)  # type: ignore[union-attr]
        self.error(node, "the message of a raise or assert in compiled code must be a constant string "
                         "(values in it are not supported: print them before raising)")

    # -- a branch that always raises ---------------------------------------------------

    def merge_raising_branches(self, branches: list[list[ast.stmt]], envs: list[dict], blocks: list[Block],
                               before: dict) -> None:
        """An if's branch that always raises never reaches the code after
        the if: it yields placeholders for what the other branch assigns, so
        those variables are defined after the if."""
        raising = [always_raises(b) for b in branches]
        if raising.count(True) != 1:
            return
        k = raising.index(True)
        other = envs[1 - k]
        for name, value in other.items():
            if isinstance(value, Scalar) and value is not before.get(name):
                envs[k][name] = self.placeholder(value)

    def placeholder(self, like: Scalar) -> Scalar:
        """A value of `like`'s type where it is never used (after a raise)."""
        t = like.type
        attr = FloatAttr(0.0, t) if like.is_float else IntegerAttr(0, t)
        return Scalar(self.constant(attr), like.weak)
