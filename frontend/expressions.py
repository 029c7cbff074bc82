"""Expressions: names, constants, operators, calls, attributes, subscripts."""

from __future__ import annotations

import ast
import builtins
import math as pymath

import numpy as np
from xdsl.dialects import arith, math, scf
from xdsl.dialects.builtin import f64
from xdsl.ir import Block, SSAValue

from adpasses.core.diagnostics import CompileError
from adpasses.frontend import special_calls, unsupported
from adpasses.frontend.calls import LocalLambda
from adpasses.frontend.control import maybe_unbound
from adpasses.frontend.derivative_calls import DERIVATIVE_OBJECT, GRAD_INTRINSICS
from adpasses.frontend.derivatives import JVP_INTRINSIC, intrinsic_of
from adpasses.frontend.numbers import number_function
from adpasses.frontend.values import Array, PyObject, Scalar, Shape, TupleValue
from adpasses.ops import int_calls, integer_identity_calls, python_calls

# Views of the op table (adpasses/ops/): math./np. functions -> the op.
UNARY_MATH = python_calls(1)
BINARY_MATH = python_calls(2)
INTEGER_IDENTITY = integer_identity_calls()
# Python's math.floor/ceil/trunc return ints.
TO_INT_MATH = int_calls()
ALLOCATORS = {np.zeros: "zeros", np.ones: "ones", np.empty: "empty",
              np.zeros_like: "zeros_like", np.ones_like: "ones_like", np.empty_like: "empty_like"}
ARRAY_METHOD_NAMES = ("sum", "mean", "max", "min", "prod", "copy", "dot", "argmax", "argmin")
CONSTANTS = {"pi": pymath.pi, "e": pymath.e, "inf": pymath.inf, "nan": pymath.nan, "tau": pymath.tau}


class ExpressionMixin:
    def expr(self, node: ast.expr) -> object:
        if self.pre_evaluated and id(node) in self.pre_evaluated:
            return self.pre_evaluated.pop(id(node))
        method = getattr(self, f"expr_{type(node).__name__}", None)
        if method is None:
            hint = UNSUPPORTED_HINTS.get(type(node).__name__, "")
            kind = EXPRESSION_NAMES.get(type(node).__name__, f"{type(node).__name__.lower()} expressions")
            self.error(node, f"{_describe(node)}: {kind} are not supported in compiled functions{hint}")
        with self.at(node):
            return method(node)

    def scalar(self, node: ast.expr) -> Scalar:
        return self.as_scalar(self.expr(node), node)

    def as_scalar(self, value: object, node: ast.expr) -> Scalar:
        if isinstance(value, Scalar):
            return value
        if self.is_array(value):
            self.error(node, f"{_describe(node)} is an array where a number is needed; index it (x[i]) or "
                             "reduce it (np.sum(x), x.max(), ...)")
        if isinstance(value, PyObject) and value.obj is None:
            self.error(node, f"{_describe(node)} is None here, not a number (a None argument or default "
                             "is known when the function is compiled: test it with `if ... is None:` "
                             "before using it)")
        self.error(node, f"{_describe(node)} is not a number")

    # -- leaves ------------------------------------------------------------------

    def expr_Constant(self, node: ast.Constant) -> object:
        v = node.value
        if isinstance(v, bool):
            return Scalar(self.const_bool(v))
        if isinstance(v, int):
            return Scalar(self.const_int_literal(v, node))
        if isinstance(v, float):
            return Scalar(self.const_float(v), weak=True)
        if v is None:
            return PyObject(None)  # a compile-time object: `x is None`, a callee's argument
        if isinstance(v, complex):
            self.error(node, "complex numbers are not supported in compiled code (floats, ints and bools "
                             "are); carry the real and imaginary parts as two floats")
        if isinstance(v, (str, bytes)):
            self.error(node, f"{type(v).__name__} constants are not supported as values; only numbers "
                             "(text may appear in print(...) and in raise/assert messages)")
        self.error(node, f"{type(v).__name__} constants are not supported; only numbers")

    def expr_Name(self, node: ast.Name) -> object:
        if node.id in self.env:
            if maybe_unbound(node.id) in self.env:
                self.check_bound(node)
            return self.env[node.id]
        return self.global_value(node.id, node)

    def expr_Tuple(self, node: ast.Tuple) -> TupleValue:
        return TupleValue([self.expr(e) for e in node.elts])

    # -- operators ---------------------------------------------------------------

    def expr_BinOp(self, node: ast.BinOp) -> object:
        left, right = self.expr(node.left), self.expr(node.right)
        if self.is_array(left) or self.is_array(right):
            return self.array_binary(node.op, left, right, node)
        return self.binary(node.op, self.as_scalar(left, node.left), self.as_scalar(right, node.right), node)

    def expr_UnaryOp(self, node: ast.UnaryOp) -> Scalar:
        operand = node.operand
        if isinstance(node.op, ast.USub) and isinstance(operand, ast.Constant) \
                and type(operand.value) in (int, float):
            return self.expr_Constant(ast.copy_location(ast.Constant(-operand.value), node))
        value = self.expr(node.operand)
        if self.is_array(value):
            if isinstance(node.op, ast.USub):
                def negate(s: list[Scalar]) -> Scalar:
                    if s[0].is_bool:  # numpy raises; Python's -True (a number) is -1
                        self.error(node, "numpy boolean negative, the `-` operator, is not supported on bool "
                                         "arrays (numpy raises TypeError); use ~mask or np.logical_not(mask)")
                    return self.negate(s[0], node)
                return self.ufunc_result(self.elementwise([value], negate, node))
            if isinstance(node.op, ast.UAdd):
                return value
            if isinstance(node.op, ast.Invert):
                def invert(s: list[Scalar]) -> Scalar:
                    if not s[0].is_bool:
                        self.error(node, "~ of an array is supported on bool arrays (masks: ~(x > 0)); for "
                                         "a number array write -x - 1 (ints) or np.logical_not(x)")
                    return self.logical_not(s[0])
                return self.ufunc_result(self.elementwise([value], invert, node))
            self.error(node, "the truth value of an array is ambiguous: `not x` of an array raises in numpy; "
                             "write ~mask or np.logical_not(x) for elementwise not, or reduce it (np.any(x), "
                             "np.all(x)) first")
        a = self.as_scalar(value, node.operand)
        if isinstance(node.op, ast.USub):
            if a.is_bool and a.numpy:
                self.error(node, "numpy boolean negative, the `-` operator, is not supported on an np.bool_ "
                                 "(numpy raises TypeError); use `not b`, or -int(b) for the number")
            return self.negate(a, node)
        if isinstance(node.op, ast.UAdd):
            return a
        if isinstance(node.op, ast.Not):
            return Scalar(self.emit(arith.XOrIOp(self.to_bool(a), self.const_bool(True))).results[0])
        self.error(node, "bitwise ~ is not supported; write -x - 1 for an int, or `not b` for a bool")

    def expr_Compare(self, node: ast.Compare) -> object:
        if any(isinstance(op, (ast.Is, ast.IsNot)) for op in node.ops):
            return self.identity_compare(node)  # decided while compiling (calls.py)
        left = self.expr(node.left)
        if len(node.ops) == 1:
            right = self.expr(node.comparators[0])
            if self.is_array(left) or self.is_array(right):
                return self.array_compare(node.ops[0], left, right, node)
            self.pre_evaluated[id(node.comparators[0])] = right
        elif self.is_array(left):
            self.chained_array_comparison(node)
        result = Scalar(self.compare_chain(self.as_scalar(left, node.left), list(zip(node.ops, node.comparators)),
                                           node))
        if len(node.ops) == 1:  # a comparison of a numpy scalar is np.True_ / np.False_
            result.numpy = any(isinstance(v, Scalar) and v.numpy for v in (left, right))
        return result

    def compare_chain(self, left: Scalar, pairs: list[tuple[ast.cmpop, ast.expr]], node: ast.Compare) -> SSAValue:
        """`left op0 c0 op1 c1 ...`; like Python, a comparand that may raise
        (indexing, calls) is not evaluated once a comparison is false."""
        op, right_node = pairs[0]
        right = self.expr(right_node)
        if self.is_array(right) and len(node.ops) > 1:
            self.chained_array_comparison(node)
        right = self.as_scalar(right, right_node)
        c = self.compare(op, left, right, node)
        rest = pairs[1:]
        if not rest:
            return c
        if any(_may_raise(n) for _, n in rest):
            return self.branch_values(c, lambda: Scalar(self.compare_chain(right, rest, node)),
                                      lambda: Scalar(self.const_bool(False)), node).value
        return self.emit(arith.AndIOp(c, self.compare_chain(right, rest, node))).results[0]

    def chained_array_comparison(self, node: ast.Compare) -> None:
        """`0 < x < 1` of an array is `(0 < x) and (x < 1)` in Python, which
        raises in numpy (the truth value of an array is ambiguous)."""
        parts = [node.left, *node.comparators]
        pairs = " & ".join(f"({ast.unparse(a)} {_CMP_TEXT[type(op)]} {ast.unparse(b)})"
                           for a, op, b in zip(parts, node.ops, parts[1:]))
        self.error(node, f"a chained comparison of arrays is `and` of two arrays, which raises in numpy (the "
                         f"truth value of an array is ambiguous); write the elementwise {pairs}")

    def expr_BoolOp(self, node: ast.BoolOp) -> Scalar:
        """`a and b` is `b if a else a`, `a or b` is `a if a else b`, as in
        Python (values, not only bools). The right side is evaluated only
        when needed (`i < n and x[i] > 0` never reads x[n]); two bools whose
        right side cannot raise are combined with andi/ori instead."""
        is_and = isinstance(node.op, ast.And)
        operands = self.static_bool_operands(node)  # `r is not None and ...` (calls.py)
        if isinstance(operands, bool):
            return Scalar(self.const_bool(operands))
        value = self.scalar(operands[0])
        for rhs in operands[1:]:
            if value.is_bool and not _may_raise(rhs):
                right = self.scalar(rhs)
                if right.is_bool:
                    op = arith.AndIOp if is_and else arith.OrIOp
                    value = Scalar(self.emit(op(value.value, right.value)).results[0])
                    continue
                first, second = value, (lambda r=right: r)
            else:
                first, second = value, (lambda r=rhs: self.scalar(r))
            cond = self.to_bool(first)
            if is_and:
                value = self.branch_values(cond, second, lambda f=first: f, node)
            else:
                value = self.branch_values(cond, lambda f=first: f, second, node)
        return value

    def expr_IfExp(self, node: ast.IfExp) -> Scalar:
        static = self.static_truth(node.test)  # `1.0 if r is None else r` (calls.py)
        if static is not None:
            return self.expr(node.body if static else node.orelse)
        cond = self.to_bool(self.scalar(node.test))
        return self.branch_values(cond, lambda: self.scalar(node.body), lambda: self.scalar(node.orelse), node)

    def branch_values(self, cond: SSAValue, then_value, else_value, node: ast.AST) -> Scalar:  # type: ignore[no-untyped-def]
        """An scf.if yielding `then_value()` or `else_value()` (each built in
        its own region, so the untaken one is never evaluated)."""
        then_block, else_block = Block(), Block()
        with self.inserting_at_end(then_block):
            a = then_value()
        with self.inserting_at_end(else_block):
            b = else_value()
        t = self.common_type(a, b, node)
        with self.inserting_at_end(then_block):
            self.emit(scf.YieldOp(self.convert_to(a, t, node)))
        with self.inserting_at_end(else_block):
            self.emit(scf.YieldOp(self.convert_to(b, t, node)))
        return Scalar(self.emit(scf.IfOp(cond, [t], [then_block], [else_block])).results[0], a.weak and b.weak)

    # -- attributes and subscripts ------------------------------------------------

    def expr_Attribute(self, node: ast.Attribute) -> object:
        base = self.materialize(self.expr(node.value), node)
        if isinstance(base, Array):
            if node.attr == "shape":
                return Shape(base)
            if node.attr == "T":
                return self.transpose(base)
            if node.attr == "ndim":
                return Scalar(self.const_index(base.ndim))
            if node.attr == "size":
                size = self.const_index(1)
                for k in range(base.ndim):
                    size = self.emit(arith.MuliOp(size, self.dim(base, k))).results[0]
                return Scalar(size)
            if node.attr in ARRAY_METHOD_NAMES:
                self.error(node, f"array method .{node.attr} must be called: x.{node.attr}()")
            self.error(node, f"array attribute .{node.attr} is not supported (use .shape, .T, .ndim, .size, "
                             "or the methods .sum() .mean() .max() .min() .prod() .copy() .dot())")
        if isinstance(base, PyObject) and base.is_module:
            if node.attr in CONSTANTS and base.obj in (pymath, np):
                return Scalar(self.const_float(CONSTANTS[node.attr]), weak=True)
            if not hasattr(base.obj, node.attr):
                self.error(node, f"module {base.obj.__name__} has no attribute {node.attr}")
            value = getattr(base.obj, node.attr)
            if base.obj is np.linalg and node.attr == "norm":  # frontend/array_exprs.py
                return PyObject(value)
            if base.obj not in unsupported.SUPPORTED_MODULES and not special_calls.compiles(value) and \
                    not unsupported.readable_attribute(base.obj, value, self.is_compiled_function(value)):
                if special_calls.is_scipy_function(value):
                    self.error(node, f"{base.obj.__name__}.{node.attr} is not supported in compiled code "
                                     f"(compiled from scipy.special: {special_calls.supported_names()}); "
                                     "compute it outside and pass the result as an argument")
                self.error(node, unsupported.module_attribute(base.obj, node.attr, value))
            return self.python_value(value, node, f"{base.obj.__name__}.{node.attr}")
        self.error(node, f"attribute .{node.attr} is not supported here")

    def expr_Subscript(self, node: ast.Subscript) -> object:
        base = self.materialize(self.expr(node.value), node)
        if isinstance(base, Array):
            return self.load_or_view(base, node)
        if isinstance(base, Shape):
            k = self.constant_index_of(node.slice)
            if k is None or not -base.array.ndim <= k < base.array.ndim:
                self.error(node, f"x.shape[k] needs a constant k in range for a {base.array.ndim}-D array")
            return Scalar(self.dim(base.array, k % base.array.ndim))
        if isinstance(base, TupleValue):
            k = self.constant_index_of(node.slice)
            if k is None or not -len(base.items) <= k < len(base.items):
                self.error(node, "tuple indices must be constants in range")
            return base.items[k]
        what = "a number" if isinstance(base, Scalar) else "not an array"
        self.error(node, f"{_describe(node.value)} is {what} and cannot be indexed")

    def constant_index_of(self, node: ast.expr) -> int | None:
        if isinstance(node, ast.Constant) and isinstance(node.value, int):
            return node.value
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant):
            return -node.operand.value
        return None

    # -- calls ------------------------------------------------------------------------

    def expr_Call(self, node: ast.Call) -> object:
        if isinstance(node.func, ast.Attribute):
            base = self.expr(node.func.value)
            if self.is_array(base):
                with self.at(node):
                    return self.array_method(base, node.func.attr, node)
            self.pre_evaluated[id(node.func.value)] = base
        if isinstance(node.func, ast.Call) and isinstance(node.func.func, (ast.Name, ast.Attribute)):
            maker = self.expr(node.func.func)  # a name: evaluating it again emits nothing
            kind = intrinsic_of(maker.obj) if isinstance(maker, PyObject) else None
            if kind in GRAD_INTRINSICS:  # grad(g)(x), hessian(g)(x), ... (frontend/derivative_calls.py)
                return self.gradient_call(node, kind)  # type: ignore[arg-type]
        callee = self.expr(node.func)
        if not isinstance(callee, PyObject):
            self.error(node, f"{_describe(node.func)} is not callable")
        fn = callee.obj
        if isinstance(fn, LocalLambda):
            return self.call_lambda(fn, node)
        if intrinsic_of(fn) == JVP_INTRINSIC:  # adpasses.jvp (frontend/derivatives.py)
            return self.jvp_call(node)
        if intrinsic_of(fn) == DERIVATIVE_OBJECT:  # dg = adpasses.grad(g) made in Python
            return self.derivative_object_call(node, fn)
        result = self.special_call(fn, node)  # scipy.special (special_calls.py)
        if result is not NotImplemented:
            return result
        result = self.array_call(fn, node)
        if result is not NotImplemented:
            return result
        if fn in ALLOCATORS:
            return self.allocate(ALLOCATORS[fn], node)
        if number_function(fn):  # round, isnan, ... (numbers.py)
            return self.number_call(fn, node)
        if fn is builtins.print:  # effects.py
            return self.print_call(node)
        if self.is_compiled_function(fn):
            return self.call_function(fn, node)
        if node.keywords and _known_callee(fn):
            self.error(node, f"{_describe(node.func)} takes no keyword arguments in compiled code; "
                             "pass the arguments by position")
        if fn in UNARY_MATH or fn in TO_INT_MATH:
            self.expect_args(node, 1)
            a = self.scalar(node.args[0])
            if fn in INTEGER_IDENTITY and not a.is_float:
                # np.floor(3) is np.int64(3), of an np.int32 an np.int32, of a bool that bool
                return Scalar(a.value, numpy=True, int32=a.int32)
            op_class = UNARY_MATH.get(fn) or TO_INT_MATH[fn]
            # math.f(x) is a Python float (weak), computed in double whatever
            # x is; np.f(x) a numpy scalar of x's float precision (NEP 50)
            from_math = getattr(fn, "__module__", None) == "math"
            if a.is_bool and not from_math and fn in UNARY_MATH:
                self.error(node, f"np.{fn.__name__} of a bool is not supported (numpy computes it in float16, "
                                 "which compiled code does not have); convert it with float(b)")
            x = self.to_float(a, f64 if from_math else self.float_type_of(a, a))
            r = Scalar(self.emit(op_class(x)).results[0], weak=from_math, numpy=not from_math)
            if fn in TO_INT_MATH:
                i64 = self.emit(arith.FPToSIOp(r.value, self.int64())).results[0]
                return Scalar(self.emit(arith.IndexCastOp(i64, self.index_type())).results[0])
            return r
        if fn in BINARY_MATH:
            self.expect_args(node, 2)
            a, b = self.scalar(node.args[0]), self.scalar(node.args[1])
            from_math = getattr(fn, "__module__", None) == "math"  # a Python float, else a numpy scalar
            if fn in (np.maximum, np.minimum) and not (a.is_float or b.is_float):
                r = self.extremum(fn is np.maximum, a, b, node)  # of ints an int, as numpy's
                return Scalar(r.value, numpy=True, int32=r.int32)
            t = f64 if from_math else self.float_type_of(a, b)
            return Scalar(self.emit(BINARY_MATH[fn](self.to_float(a, t), self.to_float(b, t))).results[0],
                          weak=from_math, numpy=not from_math)
        if fn in (builtins.abs, np.abs, np.absolute):
            self.expect_args(node, 1)
            a = self.scalar(node.args[0])
            numpy = a.numpy or fn is not builtins.abs  # np.abs(3) is np.int64(3)
            if a.is_bool:
                # abs(True) is the int 1; np.abs of a bool (and abs of an np.bool_) that bool
                if numpy:
                    return Scalar(a.value, numpy=True)
                return Scalar(self.to_index(a, node))
            if a.is_float:
                return Scalar(self.emit(math.AbsFOp(a.value)).results[0], a.weak and not numpy, numpy)
            r = self.int_abs(a)
            r.numpy = r.numpy or numpy
            return r
        if fn in (builtins.min, builtins.max):
            return self.min_max(fn is builtins.min, node)
        if fn in (builtins.float, np.float64):
            self.expect_args(node, 1)
            return Scalar(self.to_float(self.scalar(node.args[0])))
        if fn is np.float32:
            self.expect_args(node, 1)
            from xdsl.dialects.builtin import f32

            return Scalar(self.to_float(self.scalar(node.args[0]), f32))
        if fn in (builtins.int, np.int64):
            self.expect_args(node, 1)
            a = self.scalar(node.args[0])
            # np.int64(...) is a numpy int: with an np.int32 it computes in int64 (NEP 50), int() a Python int
            numpy = fn is np.int64
            if a.is_float:
                i64 = self.emit(arith.FPToSIOp(a.value, self.int64())).results[0]
                return Scalar(self.emit(arith.IndexCastOp(i64, self.index_type())).results[0], numpy=numpy)
            return Scalar(self.to_index(a, node), numpy=numpy)
        if fn is builtins.bool:
            self.expect_args(node, 1)
            return Scalar(self.to_bool(self.scalar(node.args[0])))
        if fn is builtins.len:
            self.expect_args(node, 1)
            a = self.expr(node.args[0])
            if not isinstance(a, Array):
                self.error(node, "len() takes an array here")
            return Scalar(self.dim(a, 0))
        if fn is builtins.range:
            self.error(node, "range() is only supported as the iterable of a for loop")
        if fn in (pymath.hypot, np.hypot):
            return self.hypot(node)
        if getattr(fn, "__module__", None) == "math" or getattr(pymath, getattr(fn, "__name__", ""), None) is fn:
            supported = sorted({f.__name__ for f in (*UNARY_MATH, *BINARY_MATH, *TO_INT_MATH) if f.__module__ == "math"})
            self.error(node, f"math.{fn.__name__} is not supported in compiled code; the supported math "
                             f"functions are {', '.join(supported + ['hypot'])}")
        builtin = unsupported.builtin_name(fn)
        if builtin is not None:
            self.error(node, unsupported.unsupported_builtin(builtin))
        numpy_function = unsupported.numpy_name(fn)
        if numpy_function is not None:
            self.error(node, unsupported.unsupported_numpy(numpy_function, self.argument_kinds(node),
                                                           SUPPORTED_NUMPY))
        return self.call_function(fn, node)

    def argument_kinds(self, node: ast.Call) -> list[str]:
        """"array", "number" or "other" per argument of a call that is about
        to be rejected (to say what to write instead)."""
        kinds = []
        for a in [*node.args, *(k.value for k in node.keywords)]:
            try:
                value = self.expr(a)
            except CompileError:
                value = None
            kinds.append("array" if isinstance(value, Array) else "number" if isinstance(value, Scalar)
                         else "other")
        return kinds

    def expect_args(self, node: ast.Call, n: int) -> None:
        if len(node.args) != n:
            self.error(node, f"{_describe(node.func)} takes {n} argument(s), got {len(node.args)}")

    def int_abs(self, a: Scalar) -> Scalar:
        x = a.value
        neg = self.emit(arith.SubiOp(self.const_index(0), x)).results[0]
        is_neg = self.emit(arith.CmpiOp(x, self.const_index(0), "slt")).results[0]
        result = self.emit(arith.SelectOp(is_neg, neg, x)).results[0]
        # abs(np.int32(-2**31)) wraps to itself, as numpy's
        return self.as_int32(result) if a.int32 else Scalar(result, numpy=a.numpy)

    def hypot(self, node: ast.Call) -> Scalar:
        """sqrt(a*a + b*b + ...): no rescaling, so unlike Python's it can
        overflow for magnitudes above ~1e154."""
        if len(node.args) < 2:
            self.error(node, "hypot() needs at least two numbers here")
        values = [self.scalar(a) for a in node.args]
        strong = [v.type for v in values if v.is_float and not v.weak]  # NEP 50, as float_type_of
        t = f64 if not strong or f64 in strong else strong[0]
        total = None
        for v in values:
            x = self.to_float(v, t)
            square = self.emit(arith.MulfOp(x, x)).results[0]
            total = square if total is None else self.emit(arith.AddfOp(total, square)).results[0]
        return Scalar(self.emit(math.SqrtOp(total)).results[0])

    def min_max(self, is_min: bool, node: ast.Call) -> Scalar:
        if len(node.args) < 2:
            self.error(node, f"{'min' if is_min else 'max'}() needs at least two numbers here")
        best = self.scalar(node.args[0])
        for arg in node.args[1:]:
            other = self.scalar(arg)
            # Python returns one of the objects: of one kind (np.int32 and
            # np.int32, float and float) that kind; of mixed kinds compiled
            # code gives their common type (docs/frontend.md).
            same_kind = (best.type, best.numpy, best.int32) == (other.type, other.numpy, other.int32)
            numpy, int32 = best.numpy and other.numpy, best.int32 and other.int32
            best, other = self.unify(best, other, node)
            # Python: min(a, b) is b if b < a else a (and max with >).
            pick_other = self.compare(ast.Lt() if is_min else ast.Gt(), other, best, node)
            best = self.select(pick_other, other, best, node)
            if same_kind:
                best = Scalar(best.value, weak=best.weak, numpy=numpy, int32=int32)
        return best


SUPPORTED_NUMPY = ", ".join(sorted(
    {f"np.{f.__name__}" for f in (*UNARY_MATH, *BINARY_MATH) if getattr(np, f.__name__, None) is f}
    | {"np.abs", "np.absolute", "np.hypot", "np.float64", "np.float32", "np.int64", "np.round", "np.around",
       "np.isnan", "np.isinf", "np.isfinite"}))


def _known_callee(fn: object) -> bool:
    """A math/numpy function or builtin the compiler handles itself."""
    try:
        return (fn in UNARY_MATH or fn in BINARY_MATH or fn in TO_INT_MATH
                or fn in (builtins.abs, np.abs, np.absolute, builtins.min, builtins.max, builtins.float,
                          np.float64, np.float32, builtins.int, np.int64, builtins.bool, builtins.len,
                          pymath.hypot, np.hypot))
    except TypeError:  # unhashable
        return False


# How the constructs are written (the AST's class names are not).
EXPRESSION_NAMES = {
    "ListComp": "list comprehensions",
    "GeneratorExp": "generator expressions",
    "DictComp": "dict comprehensions",
    "SetComp": "set comprehensions",
    "JoinedStr": "f-strings",
    "NamedExpr": "assignment expressions (:=)",
    "Yield": "yield expressions (generators)",
    "YieldFrom": "yield from expressions (generators)",
    "Await": "await expressions",
}

UNSUPPORTED_HINTS = {
    "List": "; use a numpy array (an argument, or np.zeros(n) inside the function)",
    "Dict": "; pass numbers and arrays as arguments",
    "Set": "; pass numbers and arrays as arguments",
    "ListComp": "; write a for loop",
    "GeneratorExp": "; write a for loop",
    "DictComp": "; write a for loop",
    "SetComp": "; write a for loop",
    "Lambda": "; define a function at module level and call it",
    "JoinedStr": "; strings are not supported",
    "Starred": "; pass arguments one by one",
    "NamedExpr": "; assign in a separate statement",
    "Await": "; define the function with def, not async def",
    "Yield": "; return one number at the end",
    "YieldFrom": "; return one number at the end",
}


def _may_raise(node: ast.AST) -> bool:
    """Could evaluating `node` fail (index out of bounds, a call, integer
    division by zero)? Such operands are evaluated only when needed."""
    return any(isinstance(n, (ast.Subscript, ast.Call))
               or (isinstance(n, ast.BinOp) and isinstance(n.op, (ast.FloorDiv, ast.Mod)))
               for n in ast.walk(node))


def _describe(node: ast.AST) -> str:
    try:
        return f"'{ast.unparse(node)}'"
    except Exception:  # noqa: BLE001
        return type(node).__name__


_CMP_TEXT = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!="}
