"""Python's arithmetic on scalars, as arith/math ops.

Type rules: int op int stays int (`index`), except `/` which gives a float;
int op float promotes the int; a Python float literal adopts the precision
of a float32 operand (NEP 50), a float64 value promotes float32 to float64;
`//` and `%` round toward minus infinity as in Python; `**` with an integer
exponent is `math.fpowi`, with a float exponent `math.powf`, and int ** a
small non-negative int literal is repeated multiplication.
"""

from __future__ import annotations

import ast

from xdsl.dialects import arith, math
from xdsl.dialects.builtin import (
    Float32Type,
    Float64Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    f64,
    i1,
)
from xdsl.ir import Attribute, SSAValue

from adpasses.dialects.arith_ext import RemFOp
from adpasses.frontend.values import Scalar
from adpasses.ops import python_operators

FLOAT_OPERATORS = python_operators(2)
"""`a + b`, `a - b`, `a * b`, `a / b` on floats (a view of the op table)."""
FLOAT_UNARY_OPERATORS = python_operators(1)
"""`-a` on a float."""

INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1

CMPF = {ast.Lt: "olt", ast.LtE: "ole", ast.Gt: "ogt", ast.GtE: "oge", ast.Eq: "oeq", ast.NotEq: "une"}
OPERATOR_SYMBOLS = {ast.MatMult: "@", ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^",
                    ast.LShift: "<<", ast.RShift: ">>", ast.Mod: "%", ast.FloorDiv: "//"}
CMPI = {ast.Lt: "slt", ast.LtE: "sle", ast.Gt: "sgt", ast.GtE: "sge", ast.Eq: "eq", ast.NotEq: "ne"}


def int32_result(a: Scalar, b: Scalar) -> bool:
    """numpy computes `a op b` of ints in int32: one operand is np.int32 and
    the other np.int32, np.bool_ or a Python int or bool (weak, NEP 50); an
    np.int64 makes it int64."""
    return (a.int32 or b.int32) and not any(s.numpy and s.is_int and not s.int32 for s in (a, b))


def python_number(s: Scalar) -> bool:
    """Weak under NEP 50: a Python float (`weak`), or a Python int or bool
    (not a numpy scalar); its result with another weak value is weak too."""
    return s.weak or (not s.is_float and not s.numpy)


class ArithmeticMixin:
    """Needs `emit(op)`, `error(node, msg)` from the compiler."""

    # -- constants ----------------------------------------------------------------

    def const_index(self, n: int) -> SSAValue:
        return self.constant(IntegerAttr(n, IndexType()))

    def const_int_literal(self, n: int, node: ast.AST, name: str | None = None) -> SSAValue:
        """A Python int written in (or read by) the function: compiled code
        computes with signed 64-bit integers, so one outside their range is
        an error, never a wrapped value (2**64 would be 0)."""
        if not INT64_MIN <= n <= INT64_MAX:
            what = f"'{name}' = {n}" if name else f"integer {n}"
            self.error(node, f"{what} does not fit in a 64-bit integer (compiled code computes with "
                             f"integers from -2**63 to 2**63 - 1); use a float ({float(n):.17g}) "
                             f"if an approximate value is enough")
        return self.const_index(n)

    def const_float(self, x: float, type_: Attribute = f64) -> SSAValue:
        return self.constant(FloatAttr(float(x), type_))

    def const_bool(self, b: bool) -> SSAValue:
        return self.constant(IntegerAttr(int(b), i1))

    # -- conversions ----------------------------------------------------------------

    def to_float(self, s: Scalar, type_: Attribute = f64) -> SSAValue:
        v = s.value
        if v.type != type_ and isinstance(v.owner, arith.ConstantOp):  # fold: 2 -> 2.0
            attr = v.owner.value
            if isinstance(attr, IntegerAttr) and attr.type == i1:
                return self.const_float(1.0 if attr.value.data else 0.0, type_)
            if isinstance(attr, (IntegerAttr, FloatAttr)):
                return self.const_float(float(attr.value.data), type_)
        if s.is_float:
            if v.type == type_:
                return v
            if isinstance(type_, Float64Type):
                return self.emit(arith.ExtFOp(v, type_)).results[0]
            return self.emit(arith.TruncFOp(v, type_)).results[0]
        if s.is_bool:
            v = self.emit(arith.ExtUIOp(v, IntegerType(64))).results[0]
        elif isinstance(v.type, IndexType):
            v = self.emit(arith.IndexCastOp(v, IntegerType(64))).results[0]
        return self.emit(arith.SIToFPOp(v, type_)).results[0]

    def to_index(self, s: Scalar, node: ast.AST) -> SSAValue:
        if s.is_int:
            return s.value
        if s.is_bool:
            return self.emit(arith.IndexCastOp(self.emit(arith.ExtUIOp(s.value, IntegerType(64))).results[0], IndexType())).results[0]
        if s.is_float:
            self.error(node, "a float cannot be used as an integer here; convert it with int(...)")
        if isinstance(s.type, IntegerType):
            return self.emit(arith.IndexCastOp(s.value, IndexType())).results[0]
        self.error(node, f"unsupported scalar type {s.type}")

    def to_bool(self, s: Scalar) -> SSAValue:
        if s.is_bool:
            return s.value
        if s.is_float:
            return self.emit(arith.CmpfOp(s.value, self.const_float(0.0, s.type), "une")).results[0]
        return self.emit(arith.CmpiOp(s.value, self.const_zero_like(s), "ne")).results[0]

    def const_zero_like(self, s: Scalar) -> SSAValue:
        if s.is_float:
            return self.const_float(0.0, s.type)
        return self.constant(IntegerAttr(0, s.type))

    def float_type_of(self, a: Scalar, b: Scalar) -> Attribute:
        """Result precision of a float operation on a and b (NEP 50): a
        numpy int (np.int64, np.int32) with float32 gives float64, a Python
        int keeps float32."""
        fa = a.type if a.is_float and not a.weak else None
        fb = b.type if b.is_float and not b.weak else None
        if any(s.numpy and s.is_int for s in (a, b)):
            return f64
        if fa is None and fb is None:
            return f64
        if fa is None or fb is None:
            return fa or fb
        return f64 if f64 in (fa, fb) else fa

    # -- operations ---------------------------------------------------------------------

    def binary(self, op: ast.operator, a: Scalar, b: Scalar, node: ast.AST) -> Scalar:
        """a op b; a numpy scalar if either operand is one, as in Python; an
        int result numpy computes in int32 wraps to 32 bits."""
        if a.is_bool and b.is_bool and (a.numpy or b.numpy) and not isinstance(
                op, (ast.Div, ast.BitAnd, ast.BitOr, ast.BitXor)):
            return self.numpy_bool_binary(op, a, b, node)
        result = self.binary_value(op, a, b, node)
        result.numpy = a.numpy or b.numpy
        if result.is_int and int32_result(a, b):
            return self.as_int32(result.value)
        return result

    def numpy_bool_binary(self, op: ast.operator, a: Scalar, b: Scalar, node: ast.AST) -> Scalar:
        """An np.bool_ with a bool: numpy's bool arithmetic (+ is or, * is
        and, an np.bool_); the operators numpy computes in int8 or refuses
        are located errors."""
        if isinstance(op, (ast.Add, ast.Mult)):
            logical = arith.OrIOp if isinstance(op, ast.Add) else arith.AndIOp
            return Scalar(self.emit(logical(a.value, b.value)).results[0], numpy=True)
        symbol = {ast.Sub: "-", ast.FloorDiv: "//", ast.Mod: "%", ast.Pow: "**"}.get(type(op), "this operator")
        why = ("numpy raises TypeError" if isinstance(op, ast.Sub) else
               "numpy computes it in int8, which compiled code does not have")
        self.error(node, f"{symbol} of an np.bool_ and a bool is not supported ({why}); convert them with "
                         "int(...) first")

    def as_int32(self, value: SSAValue) -> Scalar:
        """An np.int32 result: the index `value` wrapped to 32 bits, as
        numpy's int32 arithmetic leaves it (computing in 64 bits and
        wrapping once gives the same bits for + - * // % << & | ^ ** and
        negation: they are exact, or exact modulo 2^64, in 64 bits)."""
        low = self.emit(arith.IndexCastOp(value, IntegerType(32))).results[0]
        return Scalar(self.emit(arith.IndexCastOp(low, IndexType())).results[0], numpy=True, int32=True)

    def binary_value(self, op: ast.operator, a: Scalar, b: Scalar, node: ast.AST) -> Scalar:
        if isinstance(op, ast.Pow):
            return self.power(a, b, node)
        if a.is_bool and b.is_bool and isinstance(op, (ast.BitAnd, ast.BitOr, ast.BitXor)):
            # bool & bool is a bool in Python and numpy (masks: (x > 0) & (y < 1)), not an int
            logical = {ast.BitAnd: arith.AndIOp, ast.BitOr: arith.OrIOp, ast.BitXor: arith.XOrIOp}[type(op)]
            return Scalar(self.emit(logical(a.value, b.value)).results[0])
        both_int = (a.is_int or a.is_bool) and (b.is_int or b.is_bool)
        if both_int and not isinstance(op, ast.Div):
            if isinstance(op, (ast.LShift, ast.RShift)):
                return self.int_shift(op, self.to_index(a, node), self.to_index(b, node), a.numpy or b.numpy)
            return self.int_binary(op, self.to_index(a, node), self.to_index(b, node), node)
        ftype = self.float_type_of(a, b)
        x, y = self.to_float(a, ftype), self.to_float(b, ftype)
        weak = python_number(a) and python_number(b)
        if type(op) in FLOAT_OPERATORS:
            return Scalar(self.emit(FLOAT_OPERATORS[type(op)](x, y)).results[0], weak)
        if isinstance(op, (ast.FloorDiv, ast.Mod)):
            return Scalar(self.float_divmod(x, y, floor=isinstance(op, ast.FloorDiv)), weak)
        self.error(node, f"operator {OPERATOR_SYMBOLS.get(type(op), type(op).__name__)} is not supported "
                         "on floats" + (" (@ multiplies arrays: vectors or matrices)" if isinstance(op, ast.MatMult) else ""))

    def float_divmod(self, x: SSAValue, y: SSAValue, floor: bool) -> SSAValue:
        """Python's (and numpy's npy_divmod) float `x // y` (floor) or `x % y`,
        from the exact remainder fmod(x, y) (arith.remf), not from
        floor(x / y): the rounded quotient is off by one where y is inexact
        (`1.0 // 0.1` is 9.0 and `1.0 % 0.1` 0.09999999999999995, where
        floor(x / y) gives 10.0 and 0.0) and infinite for a huge ratio
        (`1e300 % 1e-300` was -inf). A zero y gives numpy's x / y and nan."""
        e = lambda op: self.emit(op).results[0]  # noqa: E731
        t = x.type
        zero, one = self.const_float(0.0, t), self.const_float(1.0, t)
        # fmod(x, y): where |x / y| < 2**52 (float32: 2**23) and y is finite,
        # x - trunc(x / y) * y by one fma (exact); elsewhere libm's fmod, which
        # those lanes skip (they take fmod(0, 1): fmod is a loop, 50x slower
        # than the fma where every lane called it).
        quotient = e(arith.DivfOp(x, y))
        big = self.const_float(2.0**52 if isinstance(t, Float64Type) else 2.0**23, t)  # ints exact below
        fast = e(arith.AndIOp(e(arith.CmpfOp(e(math.AbsFOp(quotient)), big, "olt")),
                              e(arith.CmpfOp(e(math.AbsFOp(y)), self.const_float(float("inf"), t), "olt"))))
        near = e(math.FmaOp(e(arith.NegfOp(e(math.TruncOp(quotient)))), y, x))
        # |x / y| rounded up to an integer: one y too far; fmod is near + y with x's sign
        # (exact: Sterbenz), so every lane has fmod's exact value, and what follows is
        # CPython's float divmod on it.
        over = e(arith.AndIOp(e(arith.CmpfOp(near, zero, "une")),
                              e(arith.XOrIOp(e(arith.CmpfOp(near, zero, "olt")), e(arith.CmpfOp(x, zero, "olt"))))))
        near = e(arith.SelectOp(over, e(arith.AddfOp(near, e(math.CopySignOp(y, x)))), near))
        far = e(RemFOp(e(arith.SelectOp(fast, zero, x)), e(arith.SelectOp(fast, one, y))))
        r = e(arith.SelectOp(fast, near, far))
        # the remainder takes the sign of y: r + y where they differ (and r is not 0)
        differ = e(arith.AndIOp(e(arith.CmpfOp(r, zero, "une")),
                                e(arith.XOrIOp(e(arith.CmpfOp(r, zero, "olt")), e(arith.CmpfOp(y, zero, "olt"))))))
        if not floor:
            mod = e(arith.SelectOp(differ, e(arith.AddfOp(r, y)), r))
            # a zero remainder is +0.0 or -0.0 as y is (fmod's sign is x's)
            return e(arith.SelectOp(e(arith.CmpfOp(mod, zero, "oeq")), e(math.CopySignOp(zero, y)), mod))
        div = e(arith.DivfOp(e(arith.SubfOp(x, r)), y))   # exact up to one rounding
        div = e(arith.SelectOp(differ, e(arith.SubfOp(div, one)), div))
        q = e(math.FloorOp(div))
        up = e(arith.CmpfOp(e(arith.SubfOp(div, q)), self.const_float(0.5, t), "ogt"))
        q = e(arith.SelectOp(up, e(arith.AddfOp(q, one)), q))
        # a zero quotient has the sign of x / y; a zero y gives x / y (inf, nan)
        q = e(arith.SelectOp(e(arith.CmpfOp(div, zero, "oeq")), e(math.CopySignOp(zero, quotient)), q))
        return e(arith.SelectOp(e(arith.CmpfOp(y, zero, "oeq")), quotient, q))

    def int_shift(self, op: ast.operator, x: SSAValue, y: SSAValue, numpy: bool) -> Scalar:
        """`x << y`, `x >> y` on 64-bit ints. LLVM's shl/ashr by 64 or more
        (or a negative count) is poison: x86 masks the count, so `1 << 64`
        gave 1. Past the width, `<<` gives 0 and `>>` x's sign (0 or -1),
        as numpy's npy_lshift/npy_rshift and wrapping Python ints; a
        negative count is Python's ValueError, or numpy's out-of-range
        result where an operand is a numpy int (an array element)."""
        e = lambda o: self.emit(o).results[0]  # noqa: E731
        shift = arith.ShLIOp if isinstance(op, ast.LShift) else arith.ShRSIOp
        count = self._lower_bound_of(y)
        if isinstance(y.owner, arith.ConstantOp) and count is not None and 0 <= count < 64:
            result = e(shift(x, y))
            self._propagate_lower_bound(op, x, y, result)
            return Scalar(result)
        if not numpy and (count is None or count < 0):
            self.emit_raise_if(e(arith.CmpiOp(y, self.const_index(0), "slt")), "ValueError",  # type: ignore[attr-defined]
                               "negative shift count")
        in_range = e(arith.CmpiOp(y, self.const_index(64), "ult"))
        beyond = (self.const_index(0) if isinstance(op, ast.LShift)
                  else e(arith.ShRSIOp(x, self.const_index(63))))
        return Scalar(e(arith.SelectOp(in_range, e(shift(x, y)), beyond)))

    def int_binary(self, op: ast.operator, x: SSAValue, y: SSAValue, node: ast.AST) -> Scalar:
        simple = {ast.Add: arith.AddiOp, ast.Sub: arith.SubiOp, ast.Mult: arith.MuliOp,
                  ast.FloorDiv: arith.FloorDivSIOp, ast.BitAnd: arith.AndIOp,
                  ast.BitOr: arith.OrIOp, ast.BitXor: arith.XOrIOp,
                  ast.LShift: arith.ShLIOp, ast.RShift: arith.ShRSIOp}
        if type(op) in simple:
            result = self.emit(simple[type(op)](x, y)).results[0]
            self._propagate_lower_bound(op, x, y, result)
            return Scalar(result)
        if isinstance(op, ast.Mod):
            r = self.emit(arith.RemSIOp(x, y)).results[0]
            if self._lower_bound_of(x) is not None and self._lower_bound_of(x) >= 0 \
                    and self._lower_bound_of(y) is not None and self._lower_bound_of(y) >= 0:
                self.lower_bounds[r] = 0  # both non-negative: remsi is Python's %
                return Scalar(r)
            # Python's modulo takes the sign of the divisor.
            zero = self.const_index(0)
            nonzero = self.emit(arith.CmpiOp(r, zero, "ne")).results[0]
            r_neg = self.emit(arith.CmpiOp(r, zero, "slt")).results[0]
            y_neg = self.emit(arith.CmpiOp(y, zero, "slt")).results[0]
            differ = self.emit(arith.XOrIOp(r_neg, y_neg)).results[0]
            fix = self.emit(arith.AndIOp(nonzero, differ)).results[0]
            shifted = self.emit(arith.AddiOp(r, y)).results[0]
            return Scalar(self.emit(arith.SelectOp(fix, shifted, r)).results[0])
        self.error(node, f"operator {OPERATOR_SYMBOLS.get(type(op), type(op).__name__)} is not supported on integers")

    def _lower_bound_of(self, value: SSAValue) -> int | None:
        """A known minimum of an index value: a constant, or one recorded
        for range() variables, sizes and sums of those."""
        if value in self.lower_bounds:
            return self.lower_bounds[value]
        owner = value.owner
        if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
            return owner.value.value.data
        return None

    def _propagate_lower_bound(self, op: ast.operator, x: SSAValue, y: SSAValue, result: SSAValue) -> None:
        """i + c, i - c, i * c, i // c keep a known minimum (indices like x[i - 1])."""
        bx, by = self._lower_bound_of(x), self._lower_bound_of(y)
        if bx is None or by is None:
            return
        if isinstance(op, ast.Add):
            self.lower_bounds[result] = bx + by
        elif isinstance(op, ast.Sub) and isinstance(y.owner, arith.ConstantOp):
            self.lower_bounds[result] = bx - by
        elif isinstance(op, (ast.Mult, ast.FloorDiv)) and bx >= 0 and by >= 0:
            self.lower_bounds[result] = 0 if isinstance(op, ast.FloorDiv) else bx * by

    def power(self, a: Scalar, b: Scalar, node: ast.AST) -> Scalar:
        exponent = getattr(node, "right", None)
        literal = exponent.value if isinstance(exponent, ast.Constant) and type(exponent.value) is int else None
        if (a.is_int or a.is_bool) and (b.is_int or b.is_bool):
            if literal is None or not 0 <= literal <= 64:
                self.error(node, "int ** int needs a literal exponent between 0 and 64 here; "
                                 "use float(a) ** b for a float power")
            base_literal = self.constant_index_of(getattr(node, "left", None))
            if base_literal is not None:  # 2**64 is a literal too: fold and check it
                return Scalar(self.const_int_literal(base_literal ** literal, node))
            base = self.to_index(a, node)
            result = self.const_index(1)
            for _ in range(literal):
                result = self.emit(arith.MuliOp(result, base)).results[0]
            return Scalar(result)
        if b.is_int or b.is_bool:
            # a numpy int exponent is strong: np.float32 ** np.int32 is float64
            x = self.to_float(a, self.float_type_of(a, b))
            if literal == 2:
                return Scalar(self.emit(arith.MulfOp(x, x)).results[0], a.weak)
            # An i64 exponent: Python ints are 64-bit here, and an i32 cast
            # would silently truncate 2**32 + 1 to 1.
            # Located at the exponent, so that reports name it by its own
            # source text (`3`), not by the whole power (`rho ** 3`).
            with self.at(exponent if exponent is not None else node):
                n = self.emit(arith.IndexCastOp(self.to_index(b, node), IntegerType(64))).results[0]
            return Scalar(self.emit(math.FPowIOp(x, n)).results[0], a.weak and python_number(b))
        ftype = self.float_type_of(a, b)
        return Scalar(self.emit(math.PowFOp(self.to_float(a, ftype), self.to_float(b, ftype))).results[0],
                      python_number(a) and python_number(b))

    def negate(self, a: Scalar, node: ast.AST) -> Scalar:
        if a.is_float:
            return Scalar(self.emit(FLOAT_UNARY_OPERATORS[ast.USub](a.value)).results[0], a.weak, a.numpy)
        x = self.to_index(a, node)
        negated = self.emit(arith.SubiOp(self.const_index(0), x)).results[0]
        return self.as_int32(negated) if a.int32 else Scalar(negated, numpy=a.numpy)

    def compare(self, op: ast.cmpop, a: Scalar, b: Scalar, node: ast.AST) -> SSAValue:
        if type(op) not in CMPF:
            self.error(node, f"comparison {type(op).__name__} is not supported; use < <= > >= == !=")
        if a.is_float or b.is_float:
            ftype = self.float_type_of(a, b)
            return self.emit(arith.CmpfOp(self.to_float(a, ftype), self.to_float(b, ftype), CMPF[type(op)])).results[0]
        if a.is_bool and b.is_bool and isinstance(op, (ast.Eq, ast.NotEq)):
            return self.emit(arith.CmpiOp(a.value, b.value, CMPI[type(op)])).results[0]
        return self.emit(arith.CmpiOp(self.to_index(a, node), self.to_index(b, node), CMPI[type(op)])).results[0]

    def select(self, cond: SSAValue, a: Scalar, b: Scalar, node: ast.AST) -> Scalar:
        weak = python_number(a) and python_number(b)
        a, b = self.unify(a, b, node)
        return Scalar(self.emit(arith.SelectOp(cond, a.value, b.value)).results[0], weak and a.is_float)

    def unify(self, a: Scalar, b: Scalar, node: ast.AST) -> tuple[Scalar, Scalar]:
        """Convert two scalars to one type (for select, min, max)."""
        if a.type == b.type:
            return a, b
        if a.is_float or b.is_float:
            t = self.float_type_of(a, b)
            return Scalar(self.to_float(a, t), a.weak), Scalar(self.to_float(b, t), b.weak)
        return Scalar(self.to_index(a, node)), Scalar(self.to_index(b, node))

    def convert_to(self, s: Scalar, type_: Attribute, node: ast.AST) -> SSAValue:
        """`s` as a value of `type_` (for stores and loop-carried values)."""
        if s.type == type_:
            return s.value
        if isinstance(type_, (Float64Type, Float32Type)):
            return self.to_float(s, type_)
        if isinstance(type_, IndexType):
            return self.to_index(s, node)
        if isinstance(type_, IntegerType):
            if type_.width.data == 1:
                return self.to_bool(s)
            if s.is_float:
                self.error(node, "cannot store a float into an integer array; use int(...)")
            return self.emit(arith.IndexCastOp(self.to_index(s, node), type_)).results[0]
        self.error(node, f"cannot convert {s.type} to {type_}")
