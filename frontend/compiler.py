"""Python function -> `func.func`: the compiler's state and services.

`ModuleBuilder` owns the module being built and compiles each (function,
argument types) once; `FunctionCompiler` compiles one function body, with
the expression, statement, array and arithmetic parts as mixins. Every op
it creates carries the Python `file:line:col` of the AST node it comes
from. Errors are `CompileError`s at that location.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import inspect
import textwrap
import types
from collections.abc import Iterator

import numpy as np
from xdsl.builder import Builder
from xdsl.dialects import func, memref
from xdsl.dialects.builtin import (
    ArrayAttr,
    FileLineColLoc,
    Float32Type,
    Float64Type,
    IndexType,
    IntAttr,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    StringAttr,
    UnitAttr,
    UnknownLoc,
    f32,
    f64,
)
from xdsl.dialects.arith import ConstantOp, TruncFOp
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint

from adpasses.core.compile_locks import parse_python
from adpasses.core.compile_thread import too_deep_error
from adpasses.core.diagnostics import CompileError
from adpasses.core.parallel import prange
from adpasses.dialects.ad import CHECKPOINT_ATTR, NUMPY_RESULTS_ATTR
from adpasses.frontend import unsupported
from adpasses.frontend.binding import binder, has_plain_parameters
from adpasses.frontend.calls import CallMixin, lambda_def
from adpasses.frontend.derivative_calls import GradientCallMixin
from adpasses.frontend.derivatives import DerivativeMixin
from adpasses.frontend.effects import RAISED, EffectMixin
from adpasses.frontend.numbers import NumberMixin
from adpasses.frontend.arithmetic import ArithmeticMixin
from adpasses.frontend.array_exprs import ArrayExprMixin
from adpasses.frontend.arrays import ArrayMixin
from adpasses.frontend.control import Liveness, lift_loop_returns
from adpasses.frontend.expressions import ExpressionMixin
from adpasses.frontend.loops import LoopMixin
from adpasses.frontend.returns import FunctionResults, ReturnMixin
from adpasses.frontend.array_vars import ArrayVariableMixin
from adpasses.frontend.slices import SliceMixin
from adpasses.frontend.overlap import OverlapMixin
from adpasses.frontend.special_calls import SpecialCallMixin
from adpasses.frontend.statements import StatementMixin
from adpasses.frontend.values import Array, PyObject, Scalar, TupleValue



def jitted_python_function(obj: object) -> types.FunctionType | None:
    """The Python function behind a value: a plain function, or the
    function an `adpasses.jit` wrapper holds."""
    inner = getattr(obj, "__adpasses_function__", None)
    if isinstance(inner, types.FunctionType):
        return inner
    if isinstance(obj, types.FunctionType):
        return obj
    return None


class ModuleBuilder:
    def __init__(self) -> None:
        self.module = ModuleOp([])
        self.compiled: dict[tuple, str] = {}
        self.stack: list[types.FunctionType] = []
        self.reserved: set[str] = set()  # function names in use
        self.results: dict[str, FunctionResults] = {}  # function name -> its results' kinds
        self.helpers: dict[tuple, func.FuncOp] = {}  # functions the frontend generates (derivative_calls)

    def function(self, pyfunc: types.FunctionType, arg_types: list[Attribute], *,
                 public: bool, node: ast.AST | None = None, caller: FunctionCompiler | None = None,
                 static: dict[int, object] | None = None,
                 flags: tuple | None = None) -> func.FuncOp:
        """`pyfunc` compiled for `arg_types`; `static` holds the parameters
        (by position) that are compile-time objects (None, a function): they
        are not parameters of the func.func, and each value gets its own
        compiled version (`if radius is None:` is decided while compiling).
        `flags`: per parameter of the func.func, (weak, numpy, int32) of a
        scalar (values.Scalar: a Python number is weak under NEP 50, a numpy
        scalar strong), None for an array; each gets its own version."""
        static = static or {}
        flags = tuple(flags) if flags is not None else (None,) * len(arg_types)
        from adpasses.frontend.custom_rules import RULES_ATTR

        # A custom function's version is one per types, whatever its scalars' flags:
        # its fwd rule calls it with the rule's own parameters (not weak), and a
        # second version would compile the rules again, inside themselves
        # ("rules cannot recurse": grad(log1pexp) of docs/custom_rules.md failed).
        key_flags = None if RULES_ATTR in getattr(pyfunc, "__dict__", {}) else flags
        key = (pyfunc, tuple(arg_types), tuple((k, _static_key(v)) for k, v in sorted(static.items())), key_flags)
        if key in self.compiled:
            return self._lookup(self.compiled[key])
        if pyfunc in self.stack:
            chain = " -> ".join(f.__name__ for f in [*self.stack[self.stack.index(pyfunc):], pyfunc])
            message = f"recursion ({chain}) is not supported; rewrite it as a loop"
            if caller is not None and node is not None:
                caller.error(node, message)
            raise CompileError(message)
        name = "lambda" if pyfunc.__name__ == "<lambda>" else pyfunc.__name__
        if not public:  # callees: private, one per argument types, unique names
            suffix = len(self.compiled)
            while f"{name}_{suffix}" in self.compiled.values() or f"{name}_{suffix}" in self.reserved:
                suffix += 1
            name = f"{name}_{suffix}"
        self.reserved.add(name)
        self.stack.append(pyfunc)
        try:
            compiler = FunctionCompiler(self, pyfunc, arg_types, name, public, static, flags)
            f = compiler.compile()
            self.results[name] = compiler.results
        except CompileError:
            raise
        except RecursionError as err:  # input nested deeper than the compile thread allows
            raise too_deep_error(getattr(err, "adpasses_location", None) or _def_location(pyfunc)) \
                from None
        except Exception as err:  # a bug of ours: report it at the construct being compiled
            where = getattr(err, "adpasses_location", None)
            raise CompileError(f"internal error while compiling this ({type(err).__name__}: {err}); "
                               "please report it", location=where) from err
        finally:
            self.stack.pop()
        self.compiled[key] = name
        self.module.body.block.add_op(f)
        from adpasses.frontend.custom_rules import attach_custom_rules

        attach_custom_rules(self, pyfunc, f)  # custom_vjp / custom_jvp: its rules, beside it
        return f

    def unique_name(self, base: str) -> str:
        """`base`, or `base_N`, not yet used by a function of the module."""
        name, suffix = base, 0
        while name in self.compiled.values() or name in self.reserved:
            name = f"{base}_{suffix}"
            suffix += 1
        return name

    def _lookup(self, name: str) -> func.FuncOp:
        for op in self.module.ops:
            if isinstance(op, func.FuncOp) and op.sym_name.data == name:
                return op
        raise KeyError(name)


def _source(pyfunc: types.FunctionType) -> tuple[ast.FunctionDef, str, int, int]:
    """The function's AST, file, first line, and the indentation its
    source lost to dedenting (added back to AST columns: a method or a
    function defined inside another is parsed dedented)."""
    try:
        lines, first = inspect.getsourcelines(pyfunc)
        filename = inspect.getsourcefile(pyfunc) or "<unknown>"
    except (OSError, TypeError) as err:
        raise CompileError(
            f"cannot read the source of {pyfunc.__name__} ({err}); compiled functions must be "
            "defined in a file"
        ) from None
    source = textwrap.dedent("".join(lines))
    shift = _indent(lines[0]) - _indent(source)
    try:
        tree = parse_python(source)  # ast.parse, safe when threads compile at once
    except RecursionError:  # Python's parser: an expression nested too deeply
        raise too_deep_error(f"{filename}:{first}:1") from None
    except SyntaxError as err:  # source lines that do not parse alone
        raise CompileError(f"the source of {pyfunc.__name__} does not parse on its own ({err.msg}); "
                           "define it with def at the top level of a file",
                           location=f"{filename}:{first}:1") from None
    fdef = tree.body[0]
    if pyfunc.__name__ == "<lambda>":  # its source lines are the statement around it
        fdef = lambda_def(pyfunc, tree, first)
        if fdef is None:
            raise CompileError("this lambda cannot be told apart from the others on its line; define "
                               "the function with def", location=f"{filename}:{first}:1")
    if isinstance(fdef, ast.AsyncFunctionDef):
        raise CompileError(f"{pyfunc.__name__} is an async def (a coroutine function), which cannot be "
                           "compiled; define it with def", location=f"{filename}:{first}:1")
    if not isinstance(fdef, ast.FunctionDef):
        raise CompileError(f"{pyfunc.__name__} is not defined with def (lambdas are not supported)",
                           location=f"{filename}:{first}:1")
    return fdef, filename, first, shift


def _def_location(fn: types.FunctionType) -> str:
    """`file:line` of a function's def (the line after its decorators)."""
    try:
        lines, first = inspect.getsourcelines(fn)
        filename = inspect.getsourcefile(fn) or fn.__code__.co_filename
    except (OSError, TypeError):
        return f"{fn.__code__.co_filename}:{fn.__code__.co_firstlineno}"
    offset = next((k for k, line in enumerate(lines) if line.lstrip().startswith(("def ", "async def "))), 0)
    return f"{filename}:{first + offset}"


def _indent(text: str) -> int:
    return len(text) - len(text.lstrip(" \t"))


def _static_key(value: object) -> object:
    """A compile-time argument's part of a callee's cache key: the object
    itself (None, a function, a module), by identity."""
    return (type(value), id(value))


class FunctionCompiler(ArithmeticMixin, ArrayMixin, SliceMixin, ArrayVariableMixin, ExpressionMixin, StatementMixin, LoopMixin, ReturnMixin,
                       CallMixin, NumberMixin, EffectMixin, ArrayExprMixin, DerivativeMixin,
                       GradientCallMixin, SpecialCallMixin, OverlapMixin):
    def __init__(self, mb: ModuleBuilder, pyfunc: types.FunctionType, arg_types: list[Attribute],
                 name: str, public: bool, static: dict[int, object] | None = None,
                 flags: tuple | None = None):
        self.mb = mb
        self.param_flags = flags or (None,) * len(arg_types)
        self.pyfunc = pyfunc
        self.arg_types = arg_types
        self.static = static or {}
        self.name = name
        self.public = public
        self.fdef, self.filename, self.first_line, self.col_shift = _source(pyfunc)
        self._file = StringAttr(self.filename)
        self.entry = Block(arg_types=arg_types)
        self.builder = Builder(InsertPoint.at_end(self.entry))
        self.env: dict[str, object] = {}
        self.lower_bounds: dict[SSAValue, int] = {}  # index values with a known minimum
        self.return_required = False
        self._constants: dict[tuple, SSAValue] = {}
        self._loc_stack: list[Attribute] = [self.loc(self.fdef)]
        self._allocations: list[list[SSAValue]] = []
        self.pre_evaluated: dict[int, object] = {}  # id(ast node) -> its value, evaluated once already
        # Arrays returned from inside an if: fresh copies the caller frees.
        self._returned_copies: set[SSAValue] = set()
        # Results of callees that are views of their arguments -> the argument passed.
        self._borrowed: dict[SSAValue, SSAValue] = {}
        self.results = FunctionResults((), False)

    # -- driver --------------------------------------------------------------------

    def prepare_body(self) -> list[ast.stmt]:
        """The function's statements as compiled (returns lifted out of
        loops), with the state the statement compilers keep about them set
        up; every kind of function body (custom rules included) starts here."""
        body = lift_loop_returns(self.fdef.body)
        self.liveness = Liveness(body)
        self.carried_out: dict[int, set[str]] = {}  # loop -> the variables it carries out
        self.selection_frames: list = []  # loops rebinding array variables (array_vars.py)
        return body

    def compile(self) -> func.FuncOp:
        args = self.fdef.args
        # Defaults and keywords are bound at call time (JitFunction.bind):
        # the compiled function always receives every parameter.
        if args.vararg or args.kwarg or args.kwonlyargs or args.posonlyargs:
            self.error(self.fdef, "only plain parameters are supported (no *args, **kwargs, "
                       "keyword-only or positional-only parameters); pass arrays and numbers "
                       "as named parameters, with defaults if you like")
        if len(args.args) != len(self.arg_types) + len(self.static):
            # Calls are bound before they get here (JitFunction.bind, call_arguments):
            # only a direct build_module with the wrong number of types.
            self.error(self.fdef, f"{self.pyfunc.__name__}() has {len(args.args)} parameters but "
                                  f"build_module was given {len(self.arg_types)} argument types")
        entry_args = iter(enumerate(self.entry.args))
        for k, a in enumerate(args.args):
            if k in self.static:  # a compile-time object: None, a function
                self.env[a.arg] = PyObject(self.static[k])
                continue
            j, value = next(entry_args)
            value.name_hint = a.arg
            if isinstance(value.type, MemRefType):
                self.env[a.arg] = Array(value)
            else:
                weak, numpy, int32 = self.param_flags[j] or (False, False, False)
                self.env[a.arg] = Scalar(value, weak=weak, numpy=numpy, int32=int32)
        ret_loc = self.loc(self.fdef.body[-1]) if self.fdef.body else self.loc(self.fdef)
        with self.allocation_scope():
            body = self.prepare_body()
            result = self.returning_statements(body, self.fdef)
            with self.at_loc(ret_loc):
                returned, self.results = self.function_results(None if result is RAISED else result,
                                                               self.fdef.body[-1])
        with self.at_loc(ret_loc):
            self.emit(func.ReturnOp(*returned))
        self.drop_unused_constants()
        outputs = [v.type for v in returned]
        f = func.FuncOp(self.name, (self.arg_types, outputs), Region([self.entry]),
                        None if self.public else "private")
        f.location = self.loc(self.fdef)
        if self.public and any(k.dtype for k in self.results.kinds):
            # Number results Python returns as numpy scalars (np.float32,
            # np.int64, ...): the entry shim makes those (native/array_results).
            f.attributes[NUMPY_RESULTS_ATTR] = ArrayAttr([StringAttr(k.dtype) for k in self.results.kinds])
        return f

    def returned_value(self, result: Scalar) -> SSAValue:
        """Returns are float64, index (int) or i1 (bool)."""
        if result.is_float and not isinstance(result.type, Float64Type):
            return self.to_float(result, f64)
        if isinstance(result.type, IntegerType) and result.type.width.data != 1:
            return self.to_index(result, self.fdef)
        return result.value

    # -- emitting ---------------------------------------------------------------------

    def loc(self, node: ast.AST) -> Attribute:
        line = getattr(node, "lineno", None)
        if line is None:
            return UnknownLoc()
        return FileLineColLoc(self._file, IntAttr(self.first_line + line - 1),
                              IntAttr(getattr(node, "col_offset", 0) + 1 + self.col_shift))

    @contextlib.contextmanager
    def at(self, node: ast.AST) -> Iterator[None]:
        with self.at_loc(self.loc(node)):
            yield

    @contextlib.contextmanager
    def at_loc(self, loc: Attribute) -> Iterator[None]:
        self._loc_stack.append(loc)
        try:
            yield
        except CompileError:
            raise
        except Exception as err:
            # Remember the innermost construct an unexpected error came from.
            if not hasattr(err, "adpasses_location") and isinstance(loc, FileLineColLoc):
                err.adpasses_location = f"{loc.filename.data}:{loc.line.data}:{loc.column.data}"
            raise
        finally:
            self._loc_stack.pop()

    def emit(self, op: Operation) -> Operation:
        op.location = self._loc_stack[-1]
        return self.builder.insert(op)

    def constant(self, attr: Attribute) -> SSAValue:
        """Constants live at the start of the function body, once each."""
        key = (type(attr), str(attr))
        if key not in self._constants:
            op = ConstantOp(attr)
            op.location = self._loc_stack[-1]
            if self.entry.first_op is None:
                self.entry.add_op(op)
            else:
                self.entry.insert_op_before(op, self.entry.first_op)
            self._constants[key] = op.result
        return self._constants[key]

    def drop_unused_constants(self) -> None:
        """Constants only a discarded attempt at a loop body used."""
        for op in list(self.entry.ops):
            if isinstance(op, ConstantOp) and not op.result.uses:
                self.entry.erase_op(op)

    def constant_int(self, n: int, type_: Attribute) -> SSAValue:
        return self.constant(IntegerAttr(n, type_))

    def int64(self) -> Attribute:
        return IntegerType(64)

    def index_type(self) -> Attribute:
        return IndexType()

    @contextlib.contextmanager
    def inserting_at_end(self, block: Block) -> Iterator[None]:
        saved = self.builder.insertion_point
        self.builder.insertion_point = InsertPoint.at_end(block)
        try:
            yield
        finally:
            self.builder.insertion_point = saved

    # -- local arrays -----------------------------------------------------------------

    @contextlib.contextmanager
    def allocation_scope(self) -> Iterator[None]:
        """Arrays allocated in a block are freed at its end (before its
        terminator, which the caller emits after this scope closes)."""
        self._allocations.append([])
        try:
            yield
        finally:
            for buffer in reversed(self._allocations.pop()):
                self.emit(memref.DeallocOp.get(buffer))

    def register_allocation(self, buffer: SSAValue) -> None:
        self._allocations[-1].append(buffer)

    def release_allocation(self, buffer: SSAValue) -> bool:
        """Take `buffer` out of the current scope's deallocations (it is
        returned to the caller); False if the scope did not allocate it."""
        scope = self._allocations[-1]
        if buffer in scope:
            scope.remove(buffer)
            return True
        return False

    # -- types --------------------------------------------------------------------------

    def common_type(self, a: Scalar, b: Scalar, node: ast.AST) -> Attribute:
        if a.type == b.type:
            return a.type
        if a.is_float or b.is_float:
            return self.float_type_of(a, b)
        return IndexType()

    # -- names ------------------------------------------------------------------------------

    def global_value(self, name: str, node: ast.AST) -> object:
        closure = dict(zip(self.pyfunc.__code__.co_freevars,
                           (c.cell_contents for c in (self.pyfunc.__closure__ or ()))))
        if name in closure:
            return self.python_value(closure[name], node, name, closure=True)
        if name in self.pyfunc.__globals__:
            return self.python_value(self.pyfunc.__globals__[name], node, name)
        if hasattr(builtins, name):
            return PyObject(getattr(builtins, name))
        self.error(node, f"name '{name}' is not defined here; assign it before this line or pass it "
                         "as an argument")

    def python_value(self, value: object, node: ast.AST, name: str, closure: bool = False) -> object:
        """A Python object read from globals, a closure or a module attribute.
        Numbers are frozen at compile time, as numba does."""
        if isinstance(value, bool):
            return Scalar(self.const_bool(value))
        if isinstance(value, (int, np.integer)):
            return Scalar(self.const_int_literal(int(value), node, name))
        if isinstance(value, (float, np.floating)):
            return Scalar(self.const_float(float(value)), weak=True)
        if isinstance(value, types.ModuleType):
            # Only math and numpy attributes compile; reading another module's
            # attribute is an error that names the attribute (expr_Attribute).
            return PyObject(value)
        if callable(value):
            return PyObject(value)
        where = "closure variable" if closure else "global"
        self.error(node, f"{where} '{name}' of type {type(value).__name__} cannot be read by compiled "
                         "code; pass it as an argument (numbers, modules and functions are allowed)")

    def is_compiled_function(self, fn: object) -> bool:
        """A function the compiler compiles from its source when called: an
        @adpasses.jit function or a plain Python function (not numpy's own
        Python-level functions, like np.full)."""
        return jitted_python_function(fn) is not None and unsupported.numpy_name(fn) is None

    def call_function(self, fn: object, node: ast.Call) -> object:
        from adpasses.frontend.custom_rules import call_extern, is_extern

        if is_extern(fn):  # adpasses.extern: a C function, by address
            return call_extern(self, fn, node)
        if fn is prange:  # the for-loop form is taken before expressions (frontend/loops.py)
            self.error(node, "prange is only allowed as the iterable of a for loop "
                             "(`for i in adpasses.prange(n):`); use range for a value")
        target = jitted_python_function(fn)
        if target is None:
            name = getattr(fn, "__name__", type(fn).__name__)
            self.error(node, f"calling {name!r} ({type(fn).__name__}) is not supported in compiled code; "
                             "call math/numpy scalar functions, adpasses.jit functions or plain Python "
                             "functions defined with def")
        name = target.__name__
        values = self.call_arguments(target, node)
        operands, types_, static, flags = [], [], {}, []
        for k, v in enumerate(values):
            v = self.materialize(v, node)  # an array expression: computed into a local array
            if isinstance(v, PyObject) and self.is_static_argument(v):
                static[k] = v.obj
            elif isinstance(v, Array):
                operands.append(v.value)
                types_.append(v.type)
                flags.append(None)
            elif isinstance(v, Scalar):
                # The callee's parameter is what Python passes: a Python
                # number (weak, NEP 50) or a numpy scalar (an np.float32
                # stays float32, an np.int32 wraps as int32).
                if v.is_float and isinstance(v.type, Float32Type) and not v.weak:
                    operands.append(v.value)
                    types_.append(v.type)
                    flags.append((False, True, False))
                elif v.is_float:
                    operands.append(self.to_float(v, f64))
                    types_.append(f64)
                    flags.append((v.weak, v.numpy, False))
                elif v.is_bool:
                    operands.append(v.value)
                    types_.append(v.type)
                    flags.append((v.weak, v.numpy, False))
                else:
                    operands.append(self.to_index(v, node))
                    types_.append(IndexType())
                    flags.append((v.weak, v.numpy, v.int32))
            else:
                param = target.__code__.co_varnames[k]
                self.error(node, f"argument '{param}' of {name}() is {unsupported.value_kind(v)}: only "
                                 "numbers and arrays can be passed to a compiled function")
        callee = self.mb.function(target, types_, public=False, node=node, caller=self, static=static,
                                  flags=tuple(flags))
        outputs = list(callee.function_type.outputs.data)
        call = self.emit(func.CallOp(callee.sym_name.data, operands, outputs))
        if getattr(fn, "__adpasses_checkpoint__", False):  # adpasses.checkpoint(g): recomputed, not taped
            call.attributes[CHECKPOINT_ATTR] = UnitAttr()
        returned = self.mb.results[callee.sym_name.data]
        items: list[object] = []
        for r, kind in zip(call.results, returned.kinds):
            if not kind.array:
                # what Python holds: a Python number (weak) or a numpy scalar
                # the callee computed; an np.float32 is returned widened
                # (returned_value) and is exactly float32 again
                if kind.float32:
                    r = self.emit(TruncFOp(r, f32)).results[0]
                items.append(Scalar(r, weak=not kind.numpy, numpy=kind.numpy,
                                    int32=kind.int32 and isinstance(r.type, IndexType)))
                continue
            if kind.owned:
                self.register_allocation(r)  # the callee handed its buffer over: freed here
            else:
                self._borrowed[r] = operands[kind.argument]  # a view of what was passed
            items.append(Array(r))
        if returned.is_tuple:
            return TupleValue(items)
        return items[0] if items else None

    def call_arguments(self, target: types.FunctionType, node: ast.Call) -> list[object]:
        """The value of every parameter of `target` for this call: arguments
        bound as Python binds them (positions, keywords, defaults), each
        evaluated in source order; a bad call is an error at the call."""
        if not has_plain_parameters(target):
            # The callee's def is the problem: compiling it reports that there.
            return [self.expr(a) for a in node.args]
        for a in node.args:
            if isinstance(a, ast.Starred):
                self.error(a, "argument unpacking (*args) is not supported; pass the arguments one by one")
        for kw in node.keywords:
            if kw.arg is None:
                self.error(kw.value, "keyword unpacking (**kwargs) is not supported; pass the arguments "
                                     "one by one")
        try:
            bound = binder(target)(*node.args, **{kw.arg: kw.value for kw in node.keywords})
        except TypeError as err:
            self.error(node, f"{err} ({target.__name__} is defined at {_def_location(target)})")
        evaluated = {id(a): self.expr(a) for a in [*node.args, *(kw.value for kw in node.keywords)]}
        values = []
        for param, arg in zip(target.__code__.co_varnames, bound):
            if isinstance(arg, ast.AST):
                values.append(evaluated[id(arg)])
            elif isinstance(arg, (bool, int, float, np.integer, np.floating)):
                values.append(self.python_value(arg, node, param))  # a default: frozen like a global
            elif arg is None or self.is_compiled_function(arg):
                values.append(PyObject(arg))  # a compile-time argument of the callee
            else:
                self.error(node, f"the default value of parameter '{param}' of {target.__name__}() is a "
                                 f"{type(arg).__name__}: only numbers, None and functions can be defaults of "
                                 "a called function; pass the argument explicitly")
        return values

    # -- errors ---------------------------------------------------------------------------------

    def error(self, node: ast.AST, message: str) -> None:
        loc = self.loc(node)
        where = (f"{loc.filename.data}:{loc.line.data}:{loc.column.data}"
                 if isinstance(loc, FileLineColLoc) else None)
        raise CompileError(message, location=where, end=self.end_of(node))

    def end_of(self, node: ast.AST) -> tuple[int, int] | None:
        """(line, col) just past `node` in the file, 1-based (for the
        source line the API shows under an error)."""
        line, col = getattr(node, "end_lineno", None), getattr(node, "end_col_offset", None)
        if line is None or col is None:
            return None
        return self.first_line + line - 1, col + 1 + self.col_shift

