"""Statements with an effect beyond the values they compute: `raise`,
`assert` and `print`.

`print(a, "text", x, sep=..., end=...)` of numbers, strings, f-strings and
arrays is one `printf.print_format` marked `ad.python_print`: the lowering
hands the values to Python, which formats them as `print` would (floats
as their repr, float32 values and arrays as numpy prints them, f-string
specs like `{x:.3f}` applied) and writes to sys.stdout, in order with the
Python side's output. It runs where the statement is: once per call in a
gradient's forward sweep, never in the reverse sweep.

`raise ValueError("msg")` and `assert cond, "msg"` are `ad.raise_if %bad
{exception = "ValueError", message = "msg"}` (AssertionError for assert;
`%bad` is true for a raise, the negated condition for an assert; braces
in the message are doubled, `{{`, as placeholders are written `{0}`): the
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
import builtins

from xdsl.dialects.builtin import FloatAttr, IntegerAttr, StringAttr, UnitAttr
from xdsl.ir import Block, SSAValue

from xdsl.dialects import printf

from adpasses.core.print_codes import INT32_REPR, NUMPY_REPR, SPEC_SEP
from adpasses.core.stop_codes import raisable
from adpasses.dialects.ad import PRINT_SPECS_ATTR, PYTHON_PRINT_ATTR, RaiseIfOp, literal_message
from adpasses.frontend.values import Array, PyObject, Scalar


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
        self.emit_raise_if(self.const_bool(True), name, message)

    def stmt_Assert(self, stmt: ast.Assert) -> None:
        message = (self.constant_message(stmt.msg) if stmt.msg is not None
                   else f"assert {ast.unparse(stmt.test)}")
        ok = self.to_bool(self.scalar(stmt.test))
        self.emit_raise_if(self.negation(ok), "AssertionError", message)

    def emit_raise_if(self, bad: SSAValue, exception_class: str, message: str) -> None:
        """Raise `exception_class(message)` where `bad` holds: one
        `ad.raise_if`, the op of every error compiled code raises."""
        self.emit(RaiseIfOp(bad, exception_class, literal_message(message)))

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

    # -- print -----------------------------------------------------------------------

    def print_call(self, node: ast.Call) -> PyObject:
        sep, end = " ", "\n"
        for kw in node.keywords:
            if kw.arg in ("sep", "end"):
                text = self.constant_text(kw.value, f"print()'s {kw.arg}")
                sep, end = (text, end) if kw.arg == "sep" else (sep, text)
            elif kw.arg == "flush":
                continue  # each print is written to sys.stdout at once
            else:
                self.error(kw.value if kw.arg is None else node,
                           f"print() in compiled code takes sep= and end=, not {kw.arg or '**kwargs'}= "
                           "(it writes to sys.stdout)")
        fmt: list[str] = []
        values, specs = [], []
        for k, arg in enumerate(node.args):
            if k:
                fmt.append(sep)
            if isinstance(arg, ast.Starred):
                self.error(arg, "argument unpacking (*args) is not supported; pass the arguments one by one")
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                fmt.append(self.literal_text(arg.value, arg))
            elif isinstance(arg, ast.JoinedStr):
                for part in arg.values:
                    if isinstance(part, ast.Constant):
                        fmt.append(self.literal_text(str(part.value), arg))
                        continue
                    assert isinstance(part, ast.FormattedValue)
                    fmt.append("{}")
                    inner, called = self.repr_or_str(part.value)
                    value, kind = self.printable(inner)
                    values.append(value)
                    conversion = {-1: "", 115: "!s", 114: "!r", 97: "!r"}[part.conversion]
                    if called and conversion in ("", "!s"):
                        conversion = called  # f"{repr(x)}" is f"{x!r}"; f"{repr(x)!r}" is not compiled
                    elif called:
                        self.error(part.value, f"{{{called[1:] == 'r' and 'repr' or 'str'}(...)!r}} (the repr of a "
                                               "string) is not supported in compiled code")
                    if conversion == "!r" and kind:
                        conversion = kind  # np.float64(0.1), as Python's repr of an element
                    spec = self.constant_text(part.format_spec, "a format spec") if part.format_spec else ""
                    # An f-string field is format(value, spec), even with no spec:
                    # ":" keeps it apart from print(x)'s "" (str(value)); they differ
                    # for numpy float32, whose format(x, "") is the widened float's.
                    specs.append(conversion + (":" + spec if spec else "") if conversion else ":" + spec)
            else:
                fmt.append("{}")
                inner, called = self.repr_or_str(arg)
                value, kind = self.printable(inner)
                values.append(value)
                specs.append((kind or called) if called == "!r" else "")  # print(repr(x)), print(str(x))
        fmt.append(end)
        op = printf.PrintFormatOp("".join(fmt), *values)
        op.attributes[PYTHON_PRINT_ATTR] = UnitAttr()
        if any(specs):
            op.attributes[PRINT_SPECS_ATTR] = StringAttr(SPEC_SEP.join(specs))
        self.emit(op)
        return PyObject(None)

    def repr_or_str(self, node: ast.expr) -> tuple[ast.expr, str]:
        """`repr(x)` -> (x, "!r"), `str(x)` -> (x, "!s") (the builtins,
        printed: as `{x!r}` / `{x}`); any other node -> (node, "")."""
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("repr", "str") \
                and node.func.id not in self.env:
            fn = self.expr(node.func)
            if isinstance(fn, PyObject) and fn.obj in (builtins.repr, builtins.str):
                if len(node.args) != 1 or node.keywords:
                    self.error(node, f"{node.func.id}() takes one value here")
                return node.args[0], "!r" if fn.obj is builtins.repr else "!s"
        return node, ""

    def printable(self, node: ast.expr):  # type: ignore[no-untyped-def]
        """(the value printed, the conversion `!r` of it is: INT32_REPR for
        an np.int32, NUMPY_REPR for another numpy scalar, "" else)."""
        value = self.expr(node)
        if isinstance(value, Array):
            return value.value, ""
        if isinstance(value, Scalar):
            return value.value, INT32_REPR if value.int32 else NUMPY_REPR if value.numpy else ""
        if isinstance(value, PyObject) and value.obj is None:
            self.error(node, "printing None is not supported in compiled code; print a string")
        self.error(node, "print() in compiled code prints numbers, arrays and strings")

    def constant_text(self, node: ast.expr, what: str) -> str:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        if isinstance(node, ast.JoinedStr) and all(isinstance(v, ast.Constant) for v in node.values):
            return "".join(str(v.value) for v in node.values)  # type: ignore[union-attr]
        self.error(node, f"{what} must be a constant string in compiled code")

    def literal_text(self, text: str, node: ast.AST) -> str:
        if "{}" in text:  # the format string's placeholder (printf.print_format)
            self.error(node, "printing text that contains {} is not supported in compiled code; "
                             "print its parts separately")
        return text

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
