"""Compiling custom derivative rules (adpasses/api/custom_rules.py) beside
the function they differentiate, and naming them in its `ad.custom_rule`
attribute (conventions: adpasses/core/custom_rules.py, docs/custom_rules.md).

A rule is a Python function in the compiled subset, with JAX's calling
conventions: its parameters may be tuples (`bwd(residuals, g)` gets the
residuals as `fwd` returned them; `jvp(primals, tangents)` two tuples) and
it returns a tuple. `RuleCompiler` binds tuple parameters to several IR
arguments and flattens the returned tuple into the results the convention
asks for, checking its length and kinds against the function (errors at
the rule's `return`, `file:line:col`).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from xdsl.dialects import func
from xdsl.dialects.builtin import DictionaryAttr, Float64Type, MemRefType, SymbolRefAttr, UnitAttr, f64
from xdsl.ir import Attribute, Block, Region, SSAValue

from adpasses.core.diagnostics import CompileError
from adpasses.core.types import is_float_type
from adpasses.dialects.ad import CUSTOM_RULE_ATTR, NO_MEMORY_ATTR, RaiseIfOp
from adpasses.frontend.compiler import FunctionCompiler, ModuleBuilder, _def_location
from adpasses.frontend.values import Array, ArrayExpr, Scalar, TupleValue

RULES_ATTR = "__adpasses_custom_rules__"  # adpasses.api.custom_rules.RULES_ATTR


@dataclass(frozen=True)
class Zero:
    """A parameter leaf that is no IR argument: the float 0.0 (the tangent of
    an int argument)."""


Structure = "Attribute | Zero | tuple"
"""A parameter's shape: an IR type (one argument), Zero, or a tuple of them."""


def _leaves(structure: object) -> list[Attribute]:
    if isinstance(structure, tuple):
        return [t for s in structure for t in _leaves(s)]
    return [] if isinstance(structure, Zero) else [structure]  # type: ignore[list-item]


def _describe(structure: object) -> str:
    if isinstance(structure, tuple):
        return "(" + ", ".join(_describe(s) for s in structure) + ("," if len(structure) == 1 else "") + ")"
    if isinstance(structure, Zero):
        return "0.0"
    if isinstance(structure, MemRefType):
        return "array"
    return "float" if is_float_type(structure) else "int" if not str(structure) == "i1" else "bool"


_BLOCKS = {ast.If: "an `if`", ast.For: "a `for` loop", ast.While: "a `while` loop",
           ast.With: "a `with` block", ast.Try: "a `try` block", ast.Match: "a `match`"}


def _returns(node: ast.AST, inside: str | None):  # type: ignore[no-untyped-def]
    """Each `return` under `node` (not in nested functions or classes),
    with the innermost block around it ("an `if`", ...; None at the top)."""
    if isinstance(node, ast.Return):
        yield node, inside
        return
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
        return
    here = next((text for kind, text in _BLOCKS.items() if isinstance(node, kind)), inside)
    for child in ast.iter_child_nodes(node):
        yield from _returns(child, here)


class RuleCompiler(FunctionCompiler):
    """Compiles one rule: parameters of the given structures, a tuple
    returned once at the end (`returned`: the nested Python lists of
    Scalar / Array / None it returned; the caller checks and flattens it)."""

    def __init__(self, mb: ModuleBuilder, pyfunc, params: list[object], name: str, role: str,  # type: ignore[no-untyped-def]
                 hidden: list[Attribute] = (), on_return=None):
        super().__init__(mb, pyfunc, [*(t for p in params for t in _leaves(p)), *hidden], name, public=False)
        self.params = params
        self.role = role
        self.returned: object = None
        self.return_node: ast.AST = self.fdef
        # Arguments the Python function does not see (the shadows a reverse
        # rule accumulates array cotangents into), and what turns the
        # returned tuple into results, run at the return while the rule's
        # local arrays are alive.
        self.hidden_args = list(self.entry.args[len(self.entry.args) - len(hidden):]) if hidden else []
        self.on_return = on_return
        self.results: list[SSAValue] | None = None

    def compile_body(self) -> None:
        args = self.fdef.args
        if args.vararg or args.kwarg or args.kwonlyargs or args.posonlyargs or args.defaults:
            self.error(self.fdef, f"a {self.role} takes plain parameters only (no defaults, *args, "
                                  "**kwargs, keyword-only or positional-only parameters)")
        if len(args.args) != len(self.params):
            shown = ", ".join(_describe(p) for p in self.params)
            self.error(self.fdef, f"{self.pyfunc.__name__}() takes {len(args.args)} parameters, but as "
                                  f"a {self.role} it is called with {len(self.params)}: ({shown})")
        values = iter(self.entry.args)
        for a, structure in zip(args.args, self.params):
            self.env[a.arg] = self._bind(structure, values, a.arg)
        self._check_single_return()
        with self.allocation_scope():
            body = self.prepare_body()
            if not body or not isinstance(body[-1], ast.Return) or body[-1].value is None:
                self.error(body[-1] if body else self.fdef,
                           f"a {self.role} must end with `return` of a tuple")
            self.returning_statements(body, self.fdef)

    def _check_single_return(self) -> None:
        """A rule returns once, as its last statement: the first `return`
        anywhere else (in an if, a loop, a with, or before more statements)
        is an error at that `return`, saying where it is and what to write
        instead. Checked on the source, before the body compiler lifts
        loop returns, so every early return gets this one message."""
        body = self.fdef.body
        last = body[-1] if body and isinstance(body[-1], ast.Return) else None
        fix = ("assign the values to variables there and `return` the tuple once, as the "
               "rule's last statement")
        for stmt in body:
            for node, inside in _returns(stmt, None):
                if node is last:
                    continue
                where = (f"inside {inside}" if inside is not None
                         else "before the end of the rule (statements follow it)")
                self.error(node, f"a {self.role} returns once, at its end, but this `return` is "
                                 f"{where}: {fix}")

    def _bind(self, structure: object, values, name: str) -> object:  # type: ignore[no-untyped-def]
        if isinstance(structure, tuple):
            return TupleValue([self._bind(s, values, name) for s in structure])
        if isinstance(structure, Zero):
            return Scalar(self.const_float(0.0))
        value = next(values)
        value.name_hint = name
        return Array(value) if isinstance(value.type, MemRefType) else Scalar(value)

    # -- returns: one tuple, at the end ------------------------------------------------

    def return_value(self, stmt: ast.Return) -> object:
        assert stmt.value is not None
        self.return_node = stmt
        with self.at(stmt):
            self.returned = self._returned(stmt.value)
            if self.on_return is not None:
                self.results = self.on_return(self)
        self.return_required = True
        return None  # nothing for the caller to return: finish() builds the return

    def _returned(self, node: ast.expr) -> object:
        if isinstance(node, ast.Tuple):
            return [self._returned(e) for e in node.elts]
        if isinstance(node, ast.Constant) and node.value is None:
            return None
        return self._as_lists(self.expr(node))

    def _as_lists(self, value: object) -> object:
        if isinstance(value, TupleValue):
            return [self._as_lists(v) for v in value.items]
        return value

    def finish(self, results: list[SSAValue]) -> func.FuncOp:
        with self.at(self.return_node):
            self.emit(func.ReturnOp(*results))
        self.drop_unused_constants()
        f = func.FuncOp(self.name, (self.arg_types, [r.type for r in results]),
                        Region([self.entry]), "private")
        f.location = self.loc(self.fdef)
        return f

    # -- checking what was returned ---------------------------------------------------

    def fail(self, message: str) -> None:
        self.error(self.return_node, message)

    def float_leaf(self, value: object, what: str) -> SSAValue:
        if not isinstance(value, Scalar) or not value.is_float and not value.is_int:
            kind = "an array" if isinstance(value, Array) else "None" if value is None else \
                "a tuple" if isinstance(value, list) else "a bool" if isinstance(value, Scalar) else \
                type(value).__name__
            self.fail(f"{what} must be a float, but {self.pyfunc.__name__} returns {kind} there")
        with self.at(self.return_node):
            return self.to_float(value, f64)  # type: ignore[arg-type]

    def pair(self, what: str) -> list[object]:
        got = self.returned
        if not isinstance(got, list) or len(got) != 2:
            n = len(got) if isinstance(got, list) else 1
            self.fail(f"a {self.role} returns a pair {what}, but {self.pyfunc.__name__} returns "
                      f"{n} value{'s' if n != 1 else ''}")
        return got  # type: ignore[return-value]


def _compile_rule(mb: ModuleBuilder, pyfunc, params: list[object], base: str, role: str,  # type: ignore[no-untyped-def]
                  hidden: list[Attribute] = (), on_return=None) -> RuleCompiler:
    name = mb.unique_name(base)
    mb.reserved.add(name)
    if pyfunc in mb.stack:
        raise CompileError(f"the {role} {pyfunc.__name__} calls itself through the function it "
                           "differentiates; rules cannot recurse", location=_def_location(pyfunc))
    mb.stack.append(pyfunc)
    try:
        compiler = RuleCompiler(mb, pyfunc, params, name, role, hidden, on_return)
        compiler.compile_body()
    finally:
        mb.stack.pop()
    return compiler


def _residual_structure(compiler: RuleCompiler, value: object) -> tuple[object, list[SSAValue]]:
    """The structure of what fwd returned as residuals, and its leaves."""
    if isinstance(value, list):
        parts = [_residual_structure(compiler, v) for v in value]
        return tuple(p[0] for p in parts), [leaf for p in parts for leaf in p[1]]
    if isinstance(value, Scalar):
        v = value.value
        if value.is_float and not isinstance(value.type, Float64Type):
            with compiler.at(compiler.return_node):
                v = compiler.to_float(value, f64)
        return v.type, [v]
    if isinstance(value, Array) and value.value in compiler.entry.args:
        return value.type, [value.value]  # an argument, unchanged: the reverse rule reads it again
    what = ("an array" if isinstance(value, Array) else "None" if value is None
            else "an array expression" if isinstance(value, ArrayExpr) else type(value).__name__)
    compiler.fail(f"residuals must be numbers, the function's own array arguments, or tuples of "
                  f"them, but {compiler.pyfunc.__name__} returns {what} among them (save the "
                  "numbers you need, or recompute from the arguments in bwd)")
    raise AssertionError


def attach_custom_rules(mb: ModuleBuilder, pyfunc, f: func.FuncOp) -> None:  # type: ignore[no-untyped-def]
    """If `pyfunc` is a custom function, compile its rules for `f`'s types
    and name them in `f`'s `ad.custom_rule`."""
    rules = pyfunc.__dict__.get(RULES_ATTR)
    if rules is None:
        return
    attach_rules(mb, rules, f, pyfunc.__name__, _def_location(pyfunc))


def attach_rules(mb: ModuleBuilder, rules, f: func.FuncOp, name: str, where: str,  # type: ignore[no-untyped-def]
                 vjp_style: str = "defvjp") -> None:
    ftype = f.function_type
    args = list(ftype.inputs.data)
    results = list(ftype.outputs.data)
    if rules.fwd is None and rules.jvp is None and getattr(rules, "vjp", None) is None:
        raise CompileError(f"{name} is a {rules.kind} function without a rule: call "
                           f"{name}.{'defvjp(fwd, bwd)' if rules.kind == 'custom_vjp' else 'defjvp(jvp)'} "
                           "before compiling a function that calls it", location=where)
    if len(results) != 1 or not is_float_type(results[0]):
        raise CompileError(f"{name} has custom derivative rules, so it must return one float "
                           f"(it returns {len(results)} values of types {[str(r) for r in results]})",
                           location=where)
    entries: dict[str, Attribute] = {}
    sym = f.sym_name.data
    if rules.fwd is not None:
        fwd = _compile_rule(mb, rules.fwd, list(args), f"{sym}_fwd", "custom_vjp fwd rule")
        out, residuals = fwd.pair("(output, residuals)")
        primal = fwd.float_leaf(out, "the output (first item)")
        structure, leaves = _residual_structure(fwd, residuals)
        fwd_op = fwd.finish([primal, *leaves])
        shadows = [t for t in args if isinstance(t, MemRefType) and is_float_type(t.element_type)]
        bwd = _compile_rule(mb, rules.bwd, [structure, f64], f"{sym}_bwd", "custom_vjp bwd rule",
                            hidden=shadows, on_return=lambda c: _cotangents(c, args, name))
        assert bwd.results is not None
        entries["augmented_primal"] = SymbolRefAttr(fwd_op.sym_name.data)
        entries["reverse"] = SymbolRefAttr(_add(mb, bwd.finish(bwd.results)))
        _add(mb, fwd_op)
    if rules.jvp is not None:
        entries["forward"] = SymbolRefAttr(_jvp_rule(mb, rules.jvp, args, sym))
    f.attributes[CUSTOM_RULE_ATTR] = DictionaryAttr(entries)


def _jvp_rule(mb: ModuleBuilder, pyfunc, args: list[Attribute], sym: str) -> str:  # type: ignore[no-untyped-def]
    """Compile `jvp(primals, tangents) -> (out, tangent_out)`: the forward rule."""
    tangent_params = tuple(t if is_float_type(t) or (isinstance(t, MemRefType) and is_float_type(t.element_type))
                           else Zero() for t in args)
    jvp = _compile_rule(mb, pyfunc, [tuple(args), tangent_params], f"{sym}_jvp", "custom_jvp rule")
    out, tangent = jvp.pair("(output, tangent of the output)")
    values = [jvp.float_leaf(out, "the output (first item)"),
              jvp.float_leaf(tangent, "the tangent of the output (second item)")]
    return _add(mb, jvp.finish(values))


# -- extern: C functions by address ----------------------------------------------------


def is_extern(fn: object) -> bool:
    return getattr(fn, "__adpasses_extern__", False) is True


def call_extern(fc: FunctionCompiler, ext, node: ast.Call) -> Scalar:  # type: ignore[no-untyped-def]
    """A call of an `adpasses.extern` function: its declaration (once per
    module, with its rules) and a call of it."""
    if node.keywords:
        fc.error(node, f"{ext.__name__}() is a C function (adpasses.extern): pass its arguments by position")
    if len(node.args) != len(ext.args):
        fc.error(node, f"{ext.__name__}() takes {len(ext.args)} argument{'s' if len(ext.args) != 1 else ''} "
                       f"({ext.signature}), {len(node.args)} given")
    operands = []
    for k, (a, kind) in enumerate(zip(node.args, ext.args)):
        v = fc.expr(a)
        if not isinstance(v, Scalar):
            fc.error(a, f"argument {k} of {ext.__name__}() must be a number ({ext.signature})")
        with fc.at(a):
            operands.append(fc.to_float(v, f64) if kind == "double" else fc.to_index(v, a))
    name = extern_declaration(fc.mb, ext)
    call = fc.emit(func.CallOp(name, operands, [f64]))
    return Scalar(call.results[0])


def extern_declaration(mb: ModuleBuilder, ext) -> str:  # type: ignore[no-untyped-def]
    """`func.func private @extern.<name>(...)` (no body: the C function,
    bound to its address by adpasses/native/externs.py), with
    `ad.custom_rule` naming its rules; once per module."""
    from xdsl.dialects.builtin import IndexType

    declared = mb.__dict__.setdefault("_externs", {})
    if ext.symbol in declared:
        return ext.symbol
    types: list[Attribute] = [f64 if a == "double" else IndexType() for a in ext.args]
    decl = func.FuncOp.external(ext.symbol, types, [f64])
    decl.attributes[NO_MEMORY_ATTR] = UnitAttr()  # numbers in, a number out
    declared[ext.symbol] = decl
    mb.module.body.block.add_op(decl)
    entries: dict[str, Attribute] = {}
    base = ext.__name__
    if ext.vjp is not None:
        # The residuals are the arguments: fwd(args) = (f(args), args...).
        fwd_name = mb.unique_name(f"{base}_fwd")
        mb.reserved.add(fwd_name)
        block = Block(arg_types=types)
        call = func.CallOp(ext.symbol, list(block.args), [f64])
        block.add_ops([call, func.ReturnOp(call.results[0], *block.args)])
        fwd = func.FuncOp(fwd_name, (types, [f64, *types]), Region([block]), "private")
        _add(mb, fwd)
        if is_extern(ext.vjp):
            bwd_name = extern_declaration(mb, ext.vjp)
        else:
            bwd = _compile_rule(mb, ext.vjp, [*types, f64], f"{base}_bwd", "extern vjp rule")
            bwd_name = _add(mb, bwd.finish(_cotangents(bwd, types, base)))
        entries["augmented_primal"] = SymbolRefAttr(fwd_name)
        entries["reverse"] = SymbolRefAttr(bwd_name)
    if ext.jvp is not None:
        entries["forward"] = SymbolRefAttr(_jvp_rule(mb, ext.jvp, types, base))
    if entries:
        decl.attributes[CUSTOM_RULE_ATTR] = DictionaryAttr(entries)
    return ext.symbol


def _cotangents(bwd: RuleCompiler, args: list[Attribute], name: str) -> list[SSAValue]:
    got = bwd.returned
    if not isinstance(got, list):
        bwd.fail(f"a custom_vjp bwd rule returns a tuple with one cotangent per argument of {name} "
                 f"({len(args)}), like JAX: write `return (g * ...,)`")
    if len(got) != len(args):  # type: ignore[arg-type]
        bwd.fail(f"{bwd.pyfunc.__name__} returns {len(got)} cotangents, but {name} takes "  # type: ignore[arg-type]
                 f"{len(args)} argument{'s' if len(args) != 1 else ''}: return one per argument "
                 "(None for an argument without a derivative)")
    values = []
    shadows = iter(bwd.hidden_args)
    for k, (value, t) in enumerate(zip(got, args)):  # type: ignore[arg-type]
        if isinstance(t, MemRefType) and is_float_type(t.element_type):
            shadow = next(shadows)
            if value is not None:
                _accumulate(bwd, value, Array(shadow), k, name)
            continue
        if not is_float_type(t):
            if value is not None:
                bwd.fail(f"argument {k} of {name} is an int or a bool: its cotangent must be None")
            continue
        if value is None:
            values.append(bwd.const_float(0.0))
        else:
            values.append(bwd.float_leaf(value, f"the cotangent of argument {k} of {name}"))
    return values


def _accumulate(bwd: RuleCompiler, value: object, shadow: Array, k: int, name: str) -> None:
    """shadow += value, elementwise: the cotangent of array argument k."""
    from xdsl.dialects import arith, memref

    if not isinstance(value, Array) and bwd.is_array(value):  # an array expression: `np.ones(n) * g`
        with bwd.at(bwd.return_node):
            value = bwd.materialize(value, bwd.return_node)
    if not isinstance(value, Array) or value.ndim != shadow.ndim:
        kind = f"an array of rank {value.ndim}" if isinstance(value, Array) else \
            "a number" if isinstance(value, Scalar) else type(value).__name__
        bwd.fail(f"the cotangent of argument {k} of {name} (an array of rank {shadow.ndim}) must be an "
                 f"array of its shape, but {bwd.pyfunc.__name__} returns {kind}")
    sizes = [bwd.dim(shadow, d) for d in range(shadow.ndim)]
    with bwd.at(bwd.return_node):
        for d in range(shadow.ndim):  # the shapes must agree: checked at run time
            differ = bwd.emit(arith.CmpiOp(bwd.dim(value, d), sizes[d], "ne")).results[0]
            bwd.emit(RaiseIfOp(differ, "ValueError",
                               f"the cotangent {bwd.pyfunc.__name__} returns for argument {k} of {name} "
                               f"has size {{0}} in dimension {d}, but the argument has size {{1}}",
                               [bwd.dim(value, d), sizes[d]]))

    def body(idx):  # type: ignore[no-untyped-def]
        ct = bwd.emit(memref.LoadOp.get(value.value, idx)).results[0]
        old = bwd.emit(memref.LoadOp.get(shadow.value, idx)).results[0]
        ct = bwd.to_float(Scalar(ct), shadow.element)
        bwd.emit(memref.StoreOp.get(bwd.emit(arith.AddfOp(old, ct)).results[0], shadow.value, idx))

    with bwd.at(bwd.return_node):
        bwd.loop_nest(sizes, body)


def _add(mb: ModuleBuilder, f: func.FuncOp) -> str:
    mb.module.body.block.add_op(f)
    return f.sym_name.data
