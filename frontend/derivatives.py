"""Derivatives called from compiled code: `adpasses.jvp(g, primals, tangents)`
inside an `@adpasses.jit` function.

    v, dv = adpasses.jvp(g, (x, s), (dx, None))

compiles g for the argument types (like a call of g) and emits

    %v, %dv = ad.fwddiff @g_N(%x, %dx, %s) {activity = [dup, const], ret_activity = [dup]}

Semantics are the API's (`adpasses.api.forward.jvp`): `(g(*primals), the
directional derivative along the tangents)`; a tangent per primal, None
holding it constant (the only choice for ints, bools, int arrays and
compile-time arguments; a float array g writes then gets a zero tangent,
since derivatives flow through its memory), a float's tangent a number, an array's an array
of its dtype and rank (the tangent function checks its shape when it runs:
a `ValueError` otherwise). Arguments are left unchanged: g runs on copies
of the arrays it writes, and their tangents (local arrays, freed at the
end of the scope). Omitted trailing primals take g's defaults (held
constant), as in Python.

`JitFunction.build` (adpasses/api/functions.py) then runs `ad-forward` on
the module, so every later stage (the primal, `grad` by reverse over
forward, `jvp` and `hessian` of the caller) sees a call of a plain
tangent function (docs/forward_mode.md, "From compiled code").
"""

from __future__ import annotations

import ast

from xdsl.dialects import memref
from xdsl.dialects.builtin import DYNAMIC_INDEX, MemRefType, f64

from adpasses.core.types import is_float_type
from adpasses.dialects.ad import FwddiffOp
from adpasses.frontend import unsupported
from adpasses.frontend.values import Array, PyObject, Scalar, TupleValue

JVP_INTRINSIC = "jvp"
"""The value of `__adpasses_intrinsic__` on `adpasses.jvp`: how the
frontend knows the API function without importing the API."""


def intrinsic_of(fn: object) -> str | None:
    name = getattr(fn, "__adpasses_intrinsic__", None)
    return name if isinstance(name, str) else None


class DerivativeMixin:
    """`jvp_call`: adpasses.jvp in compiled code (module docstring)."""

    def jvp_call(self, node: ast.Call) -> TupleValue:
        from adpasses.frontend.compiler import jitted_python_function
        from adpasses.native.pyentry import written_parameters

        usage = "jvp(g, (x, ...), (dx, ...)) with the primals and tangents as tuples written out"
        if len(node.args) != 3 or node.keywords:
            self.error(node, f"in compiled code, call {usage}")
        g = self.expr(node.args[0])
        target = jitted_python_function(g.obj) if isinstance(g, PyObject) else None
        if target is None or not self.is_compiled_function(g.obj):
            self.error(node.args[0], "the function jvp differentiates must be an adpasses.jit function or a "
                                     "plain Python function defined with def")
        for k, what in ((1, "primals"), (2, "tangents")):
            if not isinstance(node.args[k], (ast.Tuple, ast.List)):
                self.error(node.args[k], f"jvp's {what} must be a tuple written out in the call: {usage}")
        primals, tangents = node.args[1].elts, node.args[2].elts  # type: ignore[attr-defined]
        if len(primals) != len(tangents):
            self.error(node, f"jvp got {len(primals)} primals and {len(tangents)} tangents; give one "
                             "tangent per primal (None holds it constant)")
        name = target.__name__
        call = ast.copy_location(ast.Call(func=node.args[0], args=primals, keywords=[]), node)
        call.end_lineno, call.end_col_offset = node.end_lineno, node.end_col_offset  # errors at the user's line
        values = self.call_arguments(target, call)
        given = [self._tangent(t) for t in tangents] + [None] * (len(values) - len(tangents))
        params = target.__code__.co_varnames
        operands: list = []
        types_, static, activity = [], {}, []
        for k, (v, t) in enumerate(zip(values, given)):
            v = self.materialize(v, node)
            where = primals[k] if k < len(primals) else node
            if isinstance(v, PyObject) and self.is_static_argument(v):
                static[k] = v.obj
                if t is not None:
                    self.error(tangents[k], f"argument '{params[k]}' of {name}() is known at compile time: "
                                            "its tangent must be None")
                continue
            if isinstance(v, Array):
                float_array = is_float_type(v.element)
                operands.append([v.value])
                types_.append(v.type)
                if t is None:
                    activity.append("const")
                    continue
                if not float_array:
                    self.error(tangents[k], f"argument '{params[k]}' of {name}() is an array of "
                                            f"{v.element}: it has no tangent; pass None")
                t = self.materialize(t, tangents[k])
                if not isinstance(t, Array) or t.ndim != v.ndim or t.element != v.element:
                    got = (f"an array of {t.element} with {t.ndim} dimension(s)" if isinstance(t, Array)
                           else unsupported.value_kind(t))
                    self.error(tangents[k], f"the tangent of argument '{params[k]}' of {name}() must be an "
                                            f"array of {v.element} with {v.ndim} dimension(s) (its "
                                            f"primal's), got {got}")
                operands[-1].append(t.value)
                activity.append("dup")
            elif isinstance(v, Scalar):
                if v.is_float:
                    operands.append([self.to_float(v, f64)])
                    types_.append(f64)
                else:
                    operands.append([v.value if v.is_bool else self.to_index(v, where)])
                    types_.append(operands[-1][0].type)
                if t is None:
                    activity.append("const")
                    continue
                if not v.is_float:
                    self.error(tangents[k], f"argument '{params[k]}' of {name}() is an "
                                            f"{'bool' if v.is_bool else 'int'}: it has no tangent; pass None")
                if not isinstance(t, Scalar) or t.is_bool:
                    self.error(tangents[k], f"the tangent of argument '{params[k]}' of {name}() (a float) must "
                                            f"be a number, got {unsupported.value_kind(t)}")
                operands[-1].append(self.to_float(t, f64))
                activity.append("dup")
            else:
                self.error(where, f"argument '{params[k]}' of {name}() is {unsupported.value_kind(v)}: only "
                                  "numbers and arrays can be passed to a compiled function")
        callee = self.mb.function(target, types_, public=False, node=node, caller=self, static=static)
        outputs = list(callee.function_type.outputs.data)
        if len(outputs) != 1 or not is_float_type(outputs[0]):
            self.error(node, f"jvp differentiates a function returning one float; {name}() returns "
                             f"{len(outputs)} value(s) of type(s) {', '.join(map(str, outputs)) or 'none'}")
        written = written_parameters(callee)
        with self.at(node):
            flat = []
            for k, (group, act) in enumerate(zip(operands, activity)):
                if k in written:  # g runs on copies: the caller's arrays stay unchanged
                    group = [self._copy(m) for m in group]
                    if act == "const" and is_float_type(group[0].type.element_type):
                        # Derivatives flow through the memory g writes, so the array needs a
                        # tangent even when none is given: a zero one (the API's jvp does the same).
                        group.append(self._zeros_like(Array(group[0])))  # (derivative_calls.py)
                        activity[k] = "dup"
                flat += group
            call = self.emit(FwddiffOp(callee.sym_name.data, flat, activity, ["dup"], [outputs[0]] * 2))
        return TupleValue([Scalar(call.results[0]), Scalar(call.results[1])])

    def _tangent(self, node: ast.expr) -> object | None:
        if isinstance(node, ast.Constant) and node.value is None:
            return None
        return self.expr(node)

    def _copy(self, m):  # type: ignore[no-untyped-def]
        """A local C-contiguous copy of memref `m`, as a value of m's type."""
        t = m.type
        sizes = [self.dim(Array(m), d) for d in range(len(t.get_shape()))]
        buffer = self.new_array(sizes, t.element_type)
        self.emit(memref.CopyOp(m, buffer))
        own = MemRefType(t.element_type, [DYNAMIC_INDEX] * len(sizes))
        return buffer if own == t else self.emit(memref.CastOp.get(buffer, t)).results[0]
