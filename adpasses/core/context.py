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

`compiler_context()` is the smaller context of in-process compilation (the
Python API builds its IR, it parses nothing): the dialects adpasses builds,
loaded; the LLVM dialect registered but not imported; no plugin lookup.
Importing xDSL's LLVM dialect (~60 ms) and asking xDSL's plugin registry
(`importlib.metadata` entry points, ~20-30 ms) are therefore paid by the
tools that parse text, not by a process's first gradient (docs/deployment.md,
"Cold start").
"""

from __future__ import annotations

import bisect
import math as pymath
import re

from xdsl.context import Context
from xdsl.dialects import arith, builtin, cf, func, math, memref, printf, scf
from xdsl.dialects.builtin import (
    CallSiteLoc,
    FileLineColLoc,
    FloatAttr,
    FusedLoc,
    IntAttr,
    LocationAttr,
    ModuleOp,
    NameLoc,
    NoneAttr,
    StringAttr,
    UnknownLoc,
)
from xdsl.ir import Attribute, Operation
from xdsl.parser import Parser
from xdsl.utils.lexer import Span
from xdsl.utils.mlir_lexer import MLIRTokenKind
from xdsl.utils.exceptions import ParseError, VerifyException

from adpasses.core.diagnostics import CompileError
from adpasses.core.literals import check_literals
from adpasses.core.type_errors import parse_type_message
from adpasses.core.upstream_syntax import PARSE_HOOKS, parse_affine_map_of_ssa_ids


_OTHER_DIALECTS: dict | None = None


def _other_dialects() -> dict:
    """Name -> factory of every dialect xDSL (and its plugins) provides;
    computed once per process (about 0.1 s)."""
    global _OTHER_DIALECTS
    if _OTHER_DIALECTS is None:
        from xdsl.universe import Universe

        _OTHER_DIALECTS = dict(Universe.get_multiverse().all_dialects)
    return _OTHER_DIALECTS


def _llvm_dialect():  # type: ignore[no-untyped-def]
    from xdsl.dialects.llvm import LLVM

    return LLVM


def _load_compiler_dialects(ctx: Context) -> None:
    """Load the dialects adpasses reads or writes; register (not import)
    the LLVM dialect."""
    from adpasses.dialects.ad import AD
    from adpasses.dialects.arith_ext import RemFOp
    from adpasses.dialects.special import SPECIAL
    from adpasses.dialects.upstream import UPSTREAM_OPS

    for dialect in (
        builtin.Builtin,
        func.Func,
        arith.Arith,
        math.Math,
        memref.MemRef,
        scf.Scf,
        cf.Cf,
        printf.Printf,
        AD,
        SPECIAL,
    ):
        ctx.load_dialect(dialect)
    ctx.load_op(RemFOp)
    for op in UPSTREAM_OPS:  # upstream ops xDSL lacks (index_castui, sincos, call_indirect, ...)
        ctx.load_op(op)


def make_context(allow_unregistered: bool = False) -> Context:
    """A fresh context with every dialect adpasses reads or writes loaded,
    and every other xDSL dialect registered (the one registry of all tools)."""
    ctx = Context(allow_unregistered=allow_unregistered)
    _load_compiler_dialects(ctx)
    ctx.load_dialect(_llvm_dialect())
    known = set(ctx.registered_dialect_names)
    for name, factory in _other_dialects().items():
        if name not in known:
            ctx.register_dialect(name, factory)
    return ctx


_COMPILER: Context | None = None


def compiler_context() -> Context:
    """One context per process for compiling IR that the Python API built
    (the reverse pipeline's passes, folding, types of loaded entries): the
    dialects adpasses builds are loaded, the LLVM dialect is registered and
    imported only if something asks for it, and xDSL's plugin registry is
    not consulted (IR built in-process holds no other dialect)."""
    global _COMPILER
    if _COMPILER is None:
        ctx = Context()
        _load_compiler_dialects(ctx)
        ctx.register_dialect("llvm", _llvm_dialect)
        _COMPILER = ctx
    return _COMPILER


_SHARED: Context | None = None


def shared_context() -> Context:
    """One context per process with the whole registry (`make_context`),
    for work on parsed IR (tests, tools); made once."""
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
        self._text = text
        self._op_names: list[str] = []  # names of the ops being parsed, outermost first
        self._deferred_locs: dict[str, Span] = {}  # location aliases used before their definition
        self._first_uses: dict[str, Span] = {}  # values used before their definition: the first use
        self._resource_keys: set[str] = set()  # dense_resource<key> handles seen
        self._blobs: dict[str, str] = {}  # key -> "0x..." of the file's dialect_resources block

    def _get_op_by_name(self, name: str) -> type[Operation]:
        self._op_names.append(name)
        op_type = super()._get_op_by_name(name)
        # Upstream's custom formats that xDSL lacks (adpasses/core/upstream_syntax.py).
        return PARSE_HOOKS.get(op_type.name, op_type)

    def _parse_location(self) -> LocationAttr:
        """xDSL's, plus `loc(#loc4)` before `#loc4 = loc(...)`: mlir-opt
        prints location aliases at the end of the file. An alias not yet
        defined becomes a placeholder, resolved when the module is parsed."""
        token = self._current_token
        if token.kind == MLIRTokenKind.HASH_IDENT and token.text not in self.attribute_aliases:
            self._consume_token(MLIRTokenKind.HASH_IDENT)
            self._deferred_locs.setdefault(token.text, token.span)
            return NameLoc(StringAttr(_DEFERRED + token.text), NoneAttr())
        return super()._parse_location()

    def resolve_operand(self, operand, type):  # type: ignore[no-untyped-def, override]
        """xDSL's, remembering where a value not yet defined is first used:
        an undefined value is reported there (xDSL reported it at the end of
        the file)."""
        name = operand.operand_name
        if name not in self.ssa_values and name not in self.forward_ssa_references:
            self._first_uses[name] = operand.span
        return super().resolve_operand(operand, type)

    def parse_optional_region(self, arguments=None):  # type: ignore[no-untyped-def, override]
        """xDSL's; a function body that uses a value it never defines is an
        error at the use (a later function's value of the same name must not
        stand in for it: xDSL's forward references outlive the function)."""
        before = set(self.forward_ssa_references)
        region = super().parse_optional_region(arguments)
        if region is not None and self._op_names and self._op_names[-1] == "func.func":
            left = [n for n in self.forward_ssa_references if n not in before]
            if left:
                self._undefined(left)
        return region

    def _undefined(self, names: list[str]) -> None:
        first = min(names, key=lambda n: self._first_uses[n].start if n in self._first_uses else 0)
        others = [n for n in names if n != first]
        also = f" (also undefined: {', '.join('%' + n for n in others)})" if others else ""
        self.raise_error(f"%{first} is used here but never defined{also}: define it before its use "
                         "(in this function or one enclosing region), or pass it as an argument",
                         self._first_uses.get(first))

    def parse_optional_argument(self, expect_type: bool = True):  # type: ignore[no-untyped-def, override]
        """xDSL's, plus the location mlir-opt prints after an induction
        variable (`affine.for %i loc("f.mlir":3:14) = 0 to 8`); it is
        dropped (the loop op has its own)."""
        arg = super().parse_optional_argument(expect_type)
        if arg is not None and not expect_type:
            self.parse_optional_location()
        return arg

    def parse_affine_map_of_ssa_ids(self):  # type: ignore[no-untyped-def, override]
        """`[%i, %j + 1, symbol(%n)]` of affine.load/store: every value a
        dimension (xDSL made every value a symbol, which upstream rejects
        for an induction variable; a valid symbol is a valid dimension)."""
        return parse_affine_map_of_ssa_ids(self)

    def parse_module(self, allow_implicit_module: bool = True) -> ModuleOp:
        try:
            module = super().parse_module(allow_implicit_module)
        except ParseError as err:
            if self.forward_ssa_references and "values used but not defined" in err.msg:
                self._undefined(list(self.forward_ssa_references))  # at the use, not the end of file
            raise
        if self._deferred_locs:
            _resolve_deferred_locations(self, module)
        if self._resource_keys:
            from adpasses.core.resources import resolve

            resolve(module, self._blobs, self._op_error)
        return module

    # -- dense_resource<key> and the {-# dialect_resources #-} block (core/resources.py) --

    def _parse_dialect_resource_handle(self, dialect_name, interface):  # type: ignore[no-untyped-def, override]
        """The key as written: this file's own blobs (xDSL's store is the
        context's, shared by every file parsed, and renames a key seen
        again)."""
        key = self.parse_identifier(" for resource handle")
        self._resource_keys.add(key)
        return key

    def _parse_resource(self, dialect_name, interface):  # type: ignore[no-untyped-def, override]
        key = self._parse_dialect_resource_handle(dialect_name, interface)
        self.parse_punctuation(":")
        self._blobs[key] = self.parse_str_literal()

    def _op_error(self, op: Operation, message: str) -> None:
        loc = op.location
        where = (f"{loc.filename.data}:{loc.line.data}:{loc.column.data}" if isinstance(loc, FileLineColLoc)
                 else self._file_name.data)
        raise CompileError(message, location=where)

    def parse_optional_builtin_int_or_float_attr(self):  # type: ignore[no-untyped-def]
        """xDSL's, with float literals checked against their type (it raised
        OverflowError for 1e50 : f32 and made 1e400 : f64 infinity)."""
        start = self._current_token.span
        try:
            attr = super().parse_optional_builtin_int_or_float_attr()
        except OverflowError:  # too large for the type: xDSL cannot even build it
            literal = self._literal_at(start.start)
            m = re.match(r"\s*:\s*(\w+)", self._text[start.start + len(literal):])
            self.raise_error(float_literal_problem(literal, None, m.group(1) if m else None), start)
        if isinstance(attr, FloatAttr):
            problem = float_literal_problem(self._literal_at(start.start), attr)
            if problem is not None:
                self.raise_error(problem, start)
        return attr

    def _literal_at(self, pos: int) -> str:
        m = re.match(r"-?\s*[0-9][0-9a-zA-Z.+\-]*", self._text[pos:])
        return m.group(0).replace(" ", "") if m else self._text[pos:pos + 20].split()[0]

    def _line_col(self, pos: int) -> tuple[int, int]:
        line = bisect.bisect_left(self._newlines, pos)
        start = self._newlines[line - 1] + 1 if line > 0 else 0
        return line + 1 + self._line_offset, pos - start + 1

    def parse_operation(self) -> Operation:
        start = self._current_token.span.start
        depth = len(self._op_names)
        try:
            op = super().parse_operation()
        except (ParseError, CompileError, RecursionError):
            raise
        except Exception as err:  # noqa: BLE001 - raised by xDSL inside an op's parser
            # A type or attribute that does not verify (addf on i32, an i8
            # literal out of range, ...): xDSL raises it without a position.
            name = self._op_names[depth] if len(self._op_names) > depth else None
            line, col = self._line_col(start)
            raise CompileError(_op_parse_problem(name, err),
                               location=f"{self._file_name.data}:{line}:{col}") from None
        finally:
            del self._op_names[depth:]
        if isinstance(op.location, UnknownLoc):
            line, col = self._line_col(start)
            op.location = FileLineColLoc(self._file_name, IntAttr(line), IntAttr(col))
        check_literals(op)
        return op


_DEFERRED = "\0deferred location alias "


def _resolve_deferred_locations(parser: LocatingParser, module: ModuleOp) -> None:
    """Replace the placeholders of `loc(#alias)` used before `#alias = loc(...)`
    (on ops, block arguments and inside other locations) by the alias's value."""
    aliases = parser.attribute_aliases
    done: dict[str, LocationAttr] = {}

    def resolve(loc: Attribute, active: tuple[str, ...] = ()) -> Attribute:
        if isinstance(loc, NameLoc) and loc.desc.data.startswith(_DEFERRED):
            alias = loc.desc.data[len(_DEFERRED):]
            if alias in done:
                return done[alias]
            value = aliases.get(alias)
            span = parser._deferred_locs[alias]
            if value is None:
                parser.raise_error(f"undefined location alias '{alias}': no `{alias} = loc(...)` "
                                   "in the file", span.start, span.end)
            if not isinstance(value, LocationAttr):
                parser.raise_error(f"'{alias}' is not a location (it is {value})", span.start, span.end)
            if alias in active:
                parser.raise_error(f"location alias '{alias}' refers to itself", span.start, span.end)
            done[alias] = resolved = resolve(value, (*active, alias))  # type: ignore[assignment]
            return resolved
        if isinstance(loc, NameLoc):
            return NameLoc(loc.desc, resolve(loc.location, active))
        if isinstance(loc, CallSiteLoc):
            return CallSiteLoc(resolve(loc.callee, active), resolve(loc.caller, active))
        if isinstance(loc, FusedLoc):
            return FusedLoc(tuple(resolve(x, active) for x in loc.locations), loc.metadata)
        return loc

    for op in module.walk():
        op.location = resolve(op.location)  # type: ignore[assignment]
        for region in op.regions:
            for block in region.blocks:
                for arg in block.args:
                    arg.location = resolve(arg.location)  # type: ignore[assignment]


def _op_parse_problem(name: str | None, err: Exception) -> str:
    """One line for an exception xDSL raised while parsing the op `name`."""
    text = str(err).strip()
    first = text.splitlines()[0] if text else ""
    if isinstance(err, VerifyException):
        hint = parse_type_message(name, text)
        if hint is not None:
            return hint
        return f"'{name}': {first}" if name and first else (first or "invalid attribute")
    what = f"'{name}'" if name else "this op"
    return (f"{what} cannot be parsed ({type(err).__name__}{': ' + first if first else ''}); "
            "check its operands, attributes and types")


# Largest finite value of each float type a literal may have.
_FLOAT_MAX = {"f16": 65504.0, "bf16": 3.3895313892515355e38, "f32": 3.4028234663852886e38,
              "f64": 1.7976931348623157e308}


def float_literal_problem(literal: str, attr: FloatAttr | None,
                          type_text: str | None = None) -> str | None:
    """Why a float literal cannot be used (None: it can). `attr` is None
    when xDSL could not even build it (too large for `type_text`)."""
    if attr is not None:
        type_text = str(attr.type)
    if type_text in ("f80", "f128"):
        return (f"{type_text} literals are not supported (xDSL 0.74 can neither print nor compile "
                f"them); use f64")
    if attr is not None and not pymath.isinf(attr.value.data):
        return None
    if attr is not None and literal.lstrip("-").lower().startswith("0x"):
        return None  # a bit pattern: infinity written on purpose
    if type_text is None:
        return (f"float literal {literal} is out of range for its type; use a smaller value or f64")
    largest = _FLOAT_MAX.get(type_text)
    bound = f" (largest finite value {largest:.9g})" if largest else ""
    wider = " or f64" if type_text != "f64" else ""
    inf_bits = "0x7FF0000000000000" if type_text == "f64" else None
    tail = f"; write {inf_bits} for infinity" if inf_bits else ""
    return f"float literal {literal} is out of range for {type_text}{bound}; use a smaller value{wider}{tail}"


def decode_mlir(data: bytes, name: str, line_offset: int = 0) -> str:
    """MLIR input bytes as text; a `CompileError` at the first byte that is
    not UTF-8 (a binary file gave a Python UnicodeDecodeError before)."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1 + line_offset
        col = err.start - (data.rfind(b"\n", 0, err.start) + 1) + 1
        raise CompileError(
            f"the input is not UTF-8 text (byte 0x{data[err.start]:02x} cannot be decoded; is it a "
            "binary file?): MLIR input must be UTF-8 text", location=f"{name}:{line}:{col}") from None


def parse_module(
    text: str,
    name: str = "<input>",
    ctx: Context | None = None,
    line_offset: int = 0,
) -> ModuleOp:
    """Parse MLIR text; a syntax error becomes a `CompileError` at its place.
    Input with nothing but comments and blanks is an empty module, as for
    mlir-opt (xDSL reports "Could not parse entire input!" at its end)."""
    ctx = ctx or make_context()
    if not re.sub(r"//[^\n]*", "", text).strip():
        return ModuleOp([])
    try:
        return LocatingParser(ctx, text, name, line_offset).parse_module()
    except ParseError as err:
        loc = err.span.get_location()
        raise CompileError(
            parse_error_message(err), location=f"{loc.file}:{loc.line + line_offset}:{loc.col}"
        ) from err


def parse_error_message(err: ParseError) -> str:
    """The first line of xDSL's message, without its source excerpt."""
    first = err.msg.strip().splitlines()[0] if err.msg.strip() else "syntax error"
    if first == "Could not parse entire input!":  # xDSL: a top-level token that starts no op
        return ("expected an operation here (such as `func.func` or `module {...}`); "
                "the input cannot be parsed from this point on")
    return first


def parse_type(text: str):  # type: ignore[no-untyped-def]
    """The xDSL attribute of an MLIR type's text (`memref<?xf64>`), as
    `str(attribute)` printed it."""
    return Parser(compiler_context(), text, "<type>").parse_type()
