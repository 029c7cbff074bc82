"""scipy.special in compiled code.

The elementwise functions of `adpasses.ops.special.SCIPY_SPECIAL`
(gammaln, gamma, digamma/psi, expit, log_expit, logit, erf, erfc, xlogy)
compile to their op of the table, on numbers and, fused like any array
expression, on arrays; their derivatives are the table's. Two more are
written here:

- `polygamma(n, x)`: the order first (an int), then x (a number or an
  array): `special.polygamma %x, %n`;
- `logsumexp(a, axis=None)`: a reduction, as scipy computes it: m = max
  over the axis (0 where it is not finite), then m + log(sum(exp(a - m))),
  two fused reductions; the derivative is that of the ops (max's choice,
  exp, sum, log), which the reverse sweep differentiates like any code.

scipy is never imported by adpasses: the functions are recognised in the
scipy.special the program imported (`adpasses.ops.scipy_special_op`).
Any other function of scipy is a located error naming the supported ones.
"""

from __future__ import annotations

import ast
import sys

from xdsl.dialects import arith, math

from adpasses.dialects.special import PolygammaOp
from adpasses.frontend.values import Array, ArrayExpr, Scalar
from adpasses.ops import OP_TABLE, scipy_special_op
from adpasses.ops.special import SCIPY_SPECIAL

OWN = ("polygamma", "logsumexp")
"""scipy.special functions the frontend writes itself (not one op each)."""


def _scipy_special():  # type: ignore[no-untyped-def]
    return sys.modules.get("scipy.special")


def own_special(fn: object) -> str | None:
    """'polygamma' or 'logsumexp' when fn is that function of scipy.special."""
    module = _scipy_special()
    if module is None:
        return None
    return next((name for name in OWN if getattr(module, name, None) is fn), None)


def supported_names() -> str:
    return ", ".join(sorted([*SCIPY_SPECIAL, *OWN]))


def is_scipy_function(fn: object) -> bool:
    """A callable of scipy (a ufunc of scipy.special or a Python function of a scipy module)."""
    module = getattr(fn, "__module__", None)
    if isinstance(module, str) and (module == "scipy" or module.startswith("scipy.")):
        return True
    special = _scipy_special()
    name = getattr(fn, "__name__", None)
    return special is not None and isinstance(name, str) and getattr(special, name, None) is fn


def compiles(fn: object) -> bool:
    """scipy.special functions compiled code calls (readable as module attributes)."""
    return scipy_special_op(fn) is not None or own_special(fn) is not None


class SpecialCallMixin:
    def special_call(self, fn: object, node: ast.Call) -> object:
        """A call of a scipy.special function, or NotImplemented when fn
        is not one of scipy's."""
        op = scipy_special_op(fn)
        own = own_special(fn) if op is None else None
        if op is None and own is None:
            if is_scipy_function(fn):
                name = getattr(fn, "__name__", "this function")
                self.error(node, f"scipy.special.{name} is not supported in compiled code (compiled: "
                                 f"{supported_names()}); compute it outside and pass the result as an "
                                 "argument")
            return NotImplemented
        name = getattr(fn, "__name__", own)
        if own == "logsumexp":
            return self.logsumexp(node)
        if node.keywords:
            self.error(node, f"scipy.special.{name} takes no keyword arguments in compiled code; pass "
                             "the arguments by position")
        if own == "polygamma":
            return self.polygamma(node)
        arity = OP_TABLE[op].arity
        self.expect_args(node, arity)
        args = [self.expr(a) for a in node.args]
        for a, v in zip(node.args, args):
            if not (self.is_array(v) or isinstance(v, Scalar)):
                self.error(a, f"scipy.special.{name} takes numbers or arrays")

        def apply(s: list[Scalar]) -> Scalar:
            t = self.float_type_of(s[0], s[-1])
            weak = all(x.weak for x in s)
            return Scalar(self.emit(op(*[self.to_float(x, t) for x in s])).results[0], weak)

        if any(self.is_array(v) for v in args):
            return self.elementwise(args, apply, node)
        return apply(args)  # type: ignore[arg-type]

    def polygamma(self, node: ast.Call) -> object:
        self.expect_args(node, 2)
        n, x = self.expr(node.args[0]), self.expr(node.args[1])
        if not isinstance(n, Scalar) or n.is_float or n.is_bool:
            self.error(node.args[0], "scipy.special.polygamma(n, x) in compiled code takes an int order n "
                                     "(one for all elements)")

        def apply(s: list[Scalar]) -> Scalar:
            v = self.to_float(s[0], self.float_type_of(s[0], s[0]))
            return Scalar(self.emit(PolygammaOp(v, n.value)).results[0])

        if self.is_array(x):
            return self.elementwise([x], apply, node)
        if not isinstance(x, Scalar):
            self.error(node.args[1], "scipy.special.polygamma(n, x): x must be a number or an array")
        return apply([x])

    def logsumexp(self, node: ast.Call) -> object:
        """log(sum(exp(a))) over `axis` (None: all), scipy's way (shifted by the max)."""
        keywords = {kw.arg: kw.value for kw in node.keywords}
        for key in keywords:
            if key != "axis":
                self.error(node, f"scipy.special.logsumexp in compiled code takes a and axis=, not {key}= "
                                 "(b=, keepdims=, return_sign= are not supported)")
        if not 1 <= len(node.args) <= 2 or (len(node.args) == 2 and "axis" in keywords):
            self.error(node, "scipy.special.logsumexp(a, axis=None) takes one array and an optional axis")
        axis = node.args[1] if len(node.args) == 2 else keywords.get("axis")
        if isinstance(axis, ast.Constant) and axis.value is None:
            axis = None
        a = self.expr(node.args[0])
        if isinstance(a, Scalar):
            return Scalar(self.to_float(a, self.float_type_of(a, a)))
        if not self.is_array(a):
            self.error(node.args[0], "scipy.special.logsumexp takes an array")
        if isinstance(a, Array):
            a = self.lift(a)
        peak = self.reduce(a, "max", axis, node)

        def finite_or_zero(m: Scalar) -> Scalar:
            m = Scalar(self.to_float(m, self.float_type_of(m, m)))
            finite = self.float_test_of("isfinite", m)
            zero = self.to_float(Scalar(self.const_float(0.0), weak=True), m.type)
            return Scalar(self.emit(arith.SelectOp(finite.value, m.value, zero)).results[0])

        def shifted_exp(s: list[Scalar]) -> Scalar:
            t = self.float_type_of(s[0], s[0])
            diff = self.emit(arith.SubfOp(self.to_float(s[0], t), finite_or_zero(s[1]).value)).results[0]
            return Scalar(self.emit(math.ExpOp(diff)).results[0])

        if isinstance(peak, Scalar):
            shift = peak
            total = self.reduce(self.elementwise([a, shift], shifted_exp, node), "sum", None, node)
            return self.log_plus(total, finite_or_zero(shift))
        # Broadcast the reduced max back along the axis: a leaf over the kept dimensions.
        e: ArrayExpr = a  # type: ignore[assignment]
        k = self.constant_index_of(axis) % e.ndim  # type: ignore[arg-type,operator]
        kept = tuple(d for d in range(e.ndim) if d != k)
        spread = ArrayExpr(list(e.shape), [(peak.value, kept)], lambda args: self.loaded(args[0]))
        total = self.reduce(self.elementwise([a, spread], shifted_exp, node), "sum", axis, node)
        return self.elementwise([total, peak], lambda s: self.log_plus(s[0], finite_or_zero(s[1])), node)

    def log_plus(self, total: Scalar, shift: Scalar) -> Scalar:
        """log(total) + shift."""
        t = self.float_type_of(total, total)
        log = self.emit(math.LogOp(self.to_float(total, t))).results[0]
        return Scalar(self.emit(arith.AddfOp(log, self.to_float(shift, t))).results[0])
