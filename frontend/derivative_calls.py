"""Gradients, Hessians, Hessian-vector products and forward Jacobians
called from compiled code: `adpasses.grad(g, argnums)(*args)` (and
`value_and_grad`, `hessian`, `hvp`, `jacfwd`) inside an `@adpasses.jit`
function, e.g. a Newton iteration

    for it in range(10):
        x = x - solve(hessian(f)(x), grad(f)(x))

compiles g for the argument types (like a call of g) and emits

    grad(g)(x, s)        %dx = zeroed local array
                         ad.autodiff @g_N(%x, %dx, %s, %one) {activity = [dup, const], ret_activity = [active]}
    value_and_grad       the same `with_primal`: the value first
    hvp(g)(x, s, v)      func @g_N_grad(x, dx, s) { ad.autodiff @g_N(...) }   (built once per request)
                         ad.fwddiff @g_N_grad(%x, %v, %dx, %hv, %s) {activity = [dup, dup, const]}
    hessian(g)(x, s)     the same in a loop over the unit vectors e_j: column j of H is
                         the tangent of the gradient along e_j (forward over reverse)
    jacfwd(g)(x, s)      ad.fwddiff @g_N(%x, %e_j, %s) in a loop over e_j: dg/dx_j

Semantics are the Python API's (adpasses/api/functions.py, api/forward.py):
argnums an int or a tuple of ints written in the call (negative ones count
from the end), a float argument's derivative a float, an array's a new
array of its shape and dtype (float32 stays float32), a tuple for a tuple
argnums (hessian: the nested tuple H[a][b] of shape x_a.shape + x_b.shape);
the arguments left unchanged (g runs on copies of the arrays it writes);
g's defaults for omitted arguments. A float array g writes but that is not
differentiated gets a throwaway shadow, as in the API (derivatives may flow
through its memory).

`JitFunction.build` (adpasses/api/functions.py, `_resolve_derivative_requests`)
then runs `ad-forward{inner=true}`, `ad-reverse` and `ad-forward` on the
module, so every later stage sees calls of plain gradient and tangent
functions (docs/forward_mode.md, "From compiled code").
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass

from xdsl.dialects import arith, func, memref, scf
from xdsl.dialects.builtin import DYNAMIC_INDEX, FloatAttr, IndexType, MemRefType, StringAttr, f64
from xdsl.ir import Block, SSAValue

from adpasses.core.options import check_argnums
from adpasses.core.types import is_float_type
from adpasses.dialects.ad import AutodiffOp, FwddiffOp
from adpasses.frontend import unsupported
from adpasses.frontend.values import Array, PyObject, Scalar, TupleValue

GRAD_INTRINSICS = ("grad", "value_and_grad", "hessian", "hvp", "jacfwd")
"""The values of `__adpasses_intrinsic__` on the API functions whose result
is called in compiled code (`grad(g)(x)`)."""

DERIVATIVE_OBJECT = "derivative object"
"""The value of `__adpasses_intrinsic__` on the callables those functions
return (GradCallable, HvpCallable, SweepCallable): `dg = grad(g)` made in
Python and called in compiled code."""

_OPTIONS = {"grad": ("argnums",), "value_and_grad": ("argnums",), "hessian": ("argnums", "width"),
            "hvp": ("argnums",), "jacfwd": ("argnums",)}

DEFAULT_WIDTH = 1
"""Tangents per sweep of `hessian` in compiled code when the call gives no
`width=` (lanes past the end of the last sweep seed nothing). Measured on
10^5 Hessians in a jitted loop (process CPU time, min of 3; /tmp scripts of
the fwd15b session): the 9-input neo-Hookean energy 0.56 us per Hessian at
width 1, 0.47 at 4, 0.76 at 8, 0.54 at 9, 1.22 at 16; a 2-input function
0.08 us at width 1, 0.13 at 4, 0.22 at 8. Width 1 is never far from the
best, the API's min(n, 16) cannot be chosen before the size is known."""


@dataclass
class _Argument:
    """One argument of g as the request passes it."""

    value: SSAValue | None   # None: a compile-time argument (not a parameter of g's func.func)
    array: Array | None      # the argument, if an array
    differentiated: bool     # in argnums
    written: bool            # g may write it: g runs on a copy
    shadowed: bool           # a float array with a shadow (differentiated, or written)


class GradientCallMixin:
    """`gradient_call`: grad, value_and_grad, hessian, hvp and jacfwd of a
    function, called in compiled code (module docstring)."""

    def gradient_call(self, node: ast.Call, kind: str) -> object:
        """`kind(g, argnums, ...)(*args)` written in the call."""
        from adpasses.frontend.compiler import jitted_python_function

        request = node.func
        assert isinstance(request, ast.Call)
        usage = f"{kind}(g, argnums)(*args) with g an adpasses.jit function or a plain Python function"
        options = {kw.arg: kw.value for kw in request.keywords}
        extra = [k for k in options if k not in _OPTIONS[kind]]
        if extra:
            self.error(request, f"{kind}'s option {extra[0]}= is not supported in compiled code (set "
                                "tape_limit= on the @adpasses.jit of the function instead, or call it from "
                                "Python)")
        if len(request.args) not in (1, 2) or (len(request.args) == 2 and "argnums" in options):
            self.error(request, f"in compiled code, call {usage}")
        g = self.expr(request.args[0])
        target = jitted_python_function(g.obj) if isinstance(g, PyObject) else None
        if target is None or not self.is_compiled_function(g.obj):
            self.error(request.args[0], f"the function {kind} differentiates must be an adpasses.jit function "
                                        "or a plain Python function defined with def")
        params = target.__code__.co_varnames[:target.__code__.co_argcount]
        argnums_node = request.args[1] if len(request.args) == 2 else options.get("argnums")
        width = self._width(options.get("width"), kind, target.__name__)
        nums = self._argnums(argnums_node, kind, target.__name__, params, target)
        return self._request(node, kind, target, nums, width, argnums_node or request)

    def derivative_object_call(self, node: ast.Call, obj: object) -> object:
        """`dg(x)` with `dg = adpasses.grad(g, argnums)` (or value_and_grad,
        hessian, hvp, jacfwd) made in Python: the same request."""
        kind = obj.derivative_kind  # type: ignore[attr-defined]
        jf = obj.jf  # type: ignore[attr-defined]
        if jf.tape_limit is not None or jf.strong_zero:
            self.error(node.func, f"{obj.__name__} was made with memory_limit= or strong_zero=, which compiled "  # type: ignore[attr-defined]
                                  "code does not take; set tape_limit= on the @adpasses.jit of the caller")
        width = getattr(obj, "width", None)
        if kind == "jacfwd" and width is not None:
            self.error(node.func, f"{obj.__name__} was made with width=, which jacfwd in compiled code does not "  # type: ignore[attr-defined]
                                  "take; make it without")
        return self._request(node, kind, jf.py_func, obj.argnums, width or DEFAULT_WIDTH, node.func)  # type: ignore[attr-defined]

    def _request(self, node: ast.Call, kind: str, target, nums: int | tuple, width: int,  # type: ignore[no-untyped-def]
                 where: ast.AST) -> object:
        """The request `kind(target, nums)(*node.args)`, checked like the
        API's call; errors about argnums point at `where`."""
        from adpasses.native.pyentry import written_parameters

        name = target.__name__
        params = target.__code__.co_varnames[:target.__code__.co_argcount]
        single = isinstance(nums, int)
        listed = [k % len(params) for k in ((nums,) if single else nums)]  # type: ignore[union-attr]
        args = list(node.args)
        if kind == "hvp":
            if len(listed) != 1:
                self.error(where, f"hvp({name}, argnums=...): argnums must be one int (the "
                                                    "array the Hessian is taken with respect to)")
            if not args or isinstance(args[-1], ast.Starred):
                self.error(node, f"call hvp({name})(*args, v): the arguments of {name}(), then the vector")
            v_node, args = args[-1], args[:-1]
        call = ast.copy_location(ast.Call(func=node.func, args=args, keywords=node.keywords), node)
        call.end_lineno, call.end_col_offset = node.end_lineno, node.end_col_offset
        values = self.call_arguments(target, call)
        arguments, operands, types_, static = self._gradient_arguments(node, kind, name, params, values, listed)
        callee = self.mb.function(target, types_, public=False, node=node, caller=self, static=static)
        outputs = list(callee.function_type.outputs.data)
        if len(outputs) != 1 or not is_float_type(outputs[0]):
            what = ("returns nothing" if not outputs else f"returns {len(outputs)} values" if len(outputs) > 1
                    else f"returns {outputs[0]}")
            self.error(node, f"{kind} differentiates a function returning one float; {name}() {what}")
        written = written_parameters(callee)
        position = 0
        for a in arguments:
            if a.value is not None:
                a.written = position in written
                a.shadowed = a.array is not None and is_float_type(a.array.element) and (
                    a.differentiated or a.written)
                position += 1
        with self.at(node):
            if kind in ("grad", "value_and_grad"):
                return self._reverse(callee, arguments, listed, single, kind == "value_and_grad", outputs[0])
            if kind == "jacfwd":
                return self._forward_jacobian(callee, arguments, listed, single, outputs[0])
            helper = self._gradient_function(callee, arguments, outputs[0])
            if kind == "hvp":
                return self._hessian_vector(helper, arguments, listed[0], v_node, name, params)
            return self._hessian(helper, arguments, listed, single, width)

    # -- the request ----------------------------------------------------------------

    def _argnums(self, node: ast.expr | None, kind: str, name: str, params: tuple, target) -> int | tuple:  # type: ignore[no-untyped-def]
        if node is None:
            raw: object = 0
        else:
            try:
                raw = ast.literal_eval(node)
            except ValueError:
                self.error(node, f"{kind}'s argnums must be an int or a tuple of ints written in the call "
                                 "(a constant), e.g. argnums=(0, 2)")
        code = target.__code__
        try:
            return check_argnums(raw, f"{kind}({name}, argnums={raw!r})", name, params,
                                 f"{code.co_filename}:{code.co_firstlineno}")
        except (TypeError, ValueError) as err:
            self.error(node if node is not None else target, str(err))
        raise AssertionError  # error() raises

    def _width(self, node: ast.expr | None, kind: str, name: str) -> int:
        if node is None:
            return DEFAULT_WIDTH
        try:
            width = ast.literal_eval(node)
        except ValueError:
            width = None
        if isinstance(width, bool) or not isinstance(width, int) or width < 1:
            self.error(node, f"{kind}({name}): width must be a positive int (tangents per sweep) written in "
                             "the call, e.g. width=4")
        return width  # type: ignore[return-value]

    def _gradient_arguments(self, node: ast.Call, kind: str, name: str, params: tuple, values: list,
                            listed: list[int]) -> tuple:
        """Per argument of g: its value as passed (floats as f64, ints as
        index), checked against the request; g's parameter types and the
        compile-time arguments."""
        arguments: list[_Argument] = []
        types_, static = [], {}
        operands: list[SSAValue] = []
        arrays_only = kind in ("hessian", "hvp", "jacfwd")
        for k, v in enumerate(values):
            v = self.materialize(v, node)
            wanted = k in listed
            if isinstance(v, PyObject) and self.is_static_argument(v):
                if wanted:
                    self.error(node, f"argument {k} ('{params[k]}') of {name}() is known at compile time "
                                     f"({unsupported.value_kind(v)}) and cannot be differentiated")
                static[k] = v.obj
                arguments.append(_Argument(None, None, False, False, False))
                continue
            if isinstance(v, Array):
                if wanted and not is_float_type(v.element):
                    self.error(node, f"{name}(): argument {k} ('{params[k]}') is an array of {v.element} and "
                                     "cannot be differentiated: only floats and float arrays can")
                arguments.append(_Argument(v.value, v, wanted, False, False))
                types_.append(v.type)
            elif isinstance(v, Scalar):
                if wanted and not v.is_float:
                    what = "bool" if v.is_bool else "int"
                    self.error(node, f"{name}(): argument {k} ('{params[k]}', an {what}) cannot be "
                                     "differentiated: only floats and float arrays can")
                if wanted and arrays_only:
                    self.error(node, f"{kind}({name}): argument {k} ('{params[k]}') is a float; {kind} "
                                     "differentiates float arrays (pass a float as a 1-element array)")
                value = (self.to_float(v, f64) if v.is_float else v.value if v.is_bool
                         else self.to_index(v, node))
                arguments.append(_Argument(value, None, wanted, False, False))
                types_.append(value.type)
            else:
                self.error(node, f"argument '{params[k]}' of {name}() is {unsupported.value_kind(v)}: only "
                                 "numbers and arrays can be passed to a compiled function")
            operands.append(arguments[-1].value)  # type: ignore[arg-type]
        return arguments, operands, types_, static

    # -- grad and value_and_grad: one reverse sweep ------------------------------------------

    def _reverse(self, callee, arguments: list[_Argument], listed: list[int], single: bool,  # type: ignore[no-untyped-def]
                 with_value: bool, out_type) -> object:
        flat, activity = [], []
        derivative: dict[int, object] = {}
        active: list[int] = []
        for k, a in enumerate(arguments):
            if a.value is None:
                continue
            flat.append(self._copy(a.value) if a.written else a.value)
            if a.shadowed:
                shadow = self._zeros_like(a.array)  # type: ignore[arg-type]
                flat.append(shadow)
                activity.append("dup")
                if a.differentiated:
                    derivative[k] = Array(shadow)
            elif a.differentiated:
                activity.append("active")
                active.append(k)
            else:
                activity.append("const")
        flat.append(self.const_float(1.0, out_type))  # the seed
        result_types = ([out_type] if with_value else []) + [f64] * len(active)
        op = self.emit(AutodiffOp(callee.sym_name.data, flat, activity, ["active"], result_types,
                                  with_primal=with_value))
        results = list(op.results)
        value = Scalar(results.pop(0)) if with_value else None
        for k, r in zip(active, results):
            derivative[k] = Scalar(r)
        grads = derivative[listed[0]] if single else TupleValue([derivative[k] for k in listed])
        return TupleValue([value, grads]) if with_value else grads

    # -- forward over reverse: hvp and hessian ------------------------------------------------

    def _gradient_function(self, callee, arguments: list[_Argument], out_type) -> func.FuncOp:  # type: ignore[no-untyped-def]
        """`func @<g>_grad(x, dx, s, ...)`: adds g's gradient into the shadows
        (one after each shadowed array), for forward mode to differentiate.
        Built once per callee and activities."""
        activity = ["dup" if a.shadowed else "const" for a in arguments if a.value is not None]
        key = ("gradient function", callee.sym_name.data, tuple(activity))
        made = self.mb.helpers.get(key)
        if made is not None:
            return made
        types_ = []
        for a, act in zip([a for a in arguments if a.value is not None], activity):
            types_ += [a.value.type] * (2 if act == "dup" else 1)  # type: ignore[union-attr]
        name = self.mb.unique_name(f"{callee.sym_name.data}_grad")
        self.mb.reserved.add(name)
        helper = func.FuncOp(name, (types_, []), visibility=StringAttr("private"))
        helper.location = self._loc_stack[-1]
        block = helper.body.block
        seed = arith.ConstantOp(FloatAttr(1.0, out_type))
        request = AutodiffOp(callee.sym_name.data, [*block.args, seed.result], activity, ["active"], [])
        for op in (seed, request, func.ReturnOp()):
            op.location = self._loc_stack[-1]
            block.add_op(op)
        self.mb.module.body.block.add_op(helper)
        self.mb.helpers[key] = helper
        return helper

    def _tangent_operands(self, arguments: list[_Argument], values: dict[int, SSAValue],
                          tangents: dict[int, list[SSAValue]],
                          shadows: dict[int, tuple[SSAValue, list[SSAValue]]]) -> tuple[list[SSAValue], list[str]]:
        """The operands of an ad.fwddiff of the gradient function: per
        argument its value and, when shadowed, its tangents (one per lane),
        its shadow and the shadow's tangents."""
        flat, activity = [], []
        for k, a in enumerate(arguments):
            if a.value is None:
                continue
            flat.append(values[k])
            if a.shadowed:
                flat += [*tangents[k], shadows[k][0], *shadows[k][1]]
                activity += ["dup", "dup"]
            else:
                activity.append("const")
        return flat, activity

    def _working_copies(self, arguments: list[_Argument]) -> dict[int, SSAValue]:
        """The value g is given per argument: a copy of an array it writes."""
        return {k: self._copy(a.value) if a.written else a.value  # type: ignore[arg-type]
                for k, a in enumerate(arguments) if a.value is not None}

    def _hessian_vector(self, helper: func.FuncOp, arguments: list[_Argument], k: int, v_node: ast.expr,
                        name: str, params: tuple) -> Array:
        x = arguments[k].array
        assert x is not None
        v = self.materialize(self.expr(v_node), v_node)
        if not isinstance(v, Array) or v.ndim != x.ndim or v.element != x.element:
            got = (f"an array of {v.element} with {v.ndim} dimension(s)" if isinstance(v, Array)
                   else unsupported.value_kind(v))
            self.error(v_node, f"hvp({name}): v must be an array of argument {k} ('{params[k]}')'s dtype "
                               f"{x.element} and {x.ndim} dimension(s) (its shape), got {got}; in compiled "
                               "code hvp takes one vector per call")
        values = self._working_copies(arguments)
        tangents, shadows = {}, {}
        for j, a in enumerate(arguments):
            if a.shadowed:
                # The sweep updates a written array's tangent in place: v stays the caller's.
                tangents[j] = [(self._copy(v.value) if a.written else v.value) if j == k
                               else self._zeros_like(a.array)]  # type: ignore[arg-type]
                shadows[j] = (self._zeros_like(a.array), [self._zeros_like(a.array)])  # type: ignore[arg-type]
        flat, activity = self._tangent_operands(arguments, values, tangents, shadows)
        self.emit(FwddiffOp(helper.sym_name.data, flat, activity, [], []))
        return Array(shadows[k][1][0])

    def _hessian(self, helper: func.FuncOp, arguments: list[_Argument], listed: list[int],
                 single: bool, width: int) -> object:
        """`width` lanes per sweep: lane l of the sweep at c seeds the unit
        vector e_(c+l) (nothing past the end) and gives column c+l."""
        pristine = {k: a.value for k, a in enumerate(arguments) if a.value is not None}
        values = self._working_copies(arguments)
        tangents, shadows = {}, {}
        for j, a in enumerate(arguments):
            if a.shadowed:
                tangents[j] = [self._zeros_like(a.array, fill=False) for _ in range(width)]  # type: ignore[arg-type]
                shadows[j] = (self._zeros_like(a.array, fill=False),  # type: ignore[arg-type]
                              [self._zeros_like(a.array, fill=False) for _ in range(width)])  # type: ignore[arg-type]
        sizes = {k: [self.dim(arguments[k].array, d) for d in range(arguments[k].array.ndim)]  # type: ignore[arg-type]
                 for k in listed}
        blocks = {(a, b): Array(self.new_array(sizes[a] + sizes[b], arguments[b].array.element))  # type: ignore[union-attr]
                  for a in listed for b in listed}
        zero = {j: self.const_float(0.0, arguments[j].array.element) for j in tangents}  # type: ignore[union-attr]
        flat, activity = self._tangent_operands(arguments, values, tangents, shadows)
        for b in listed:
            n = self._count(sizes[b])

            def sweep(c: SSAValue, b: int = b, n: SSAValue = n) -> None:
                for q, a in enumerate(arguments):
                    if a.written:  # each sweep starts from the argument as passed
                        self.emit(memref.CopyOp(pristine[q], values[q]))
                for q in tangents:
                    for buffer in [*tangents[q], shadows[q][0], *shadows[q][1]]:
                        self._fill(buffer, q, arguments, zero[q])
                lanes = [self._lane(c, lane, n, tangents[b][lane], sizes[b]) for lane in range(width)]
                self.emit(FwddiffOp(helper.sym_name.data, flat, activity, [], [], width))
                for lane, (valid, at) in enumerate(lanes):
                    def store(lane: int = lane, at: list = at) -> None:
                        for a in listed:  # column c+l of block (a, b): the tangent of dg/dx_a
                            measured, out = shadows[a][1][lane], blocks[(a, b)]
                            self._nest(sizes[a], lambda i, m=measured, o=out: self.emit(memref.StoreOp.get(
                                self._element(m, i, o.element), o.value, [*i, *at])))
                    self._when(valid, store)
            self._loop(n, sweep, step=width)
        if single:
            return blocks[(listed[0], listed[0])]
        return TupleValue([TupleValue([blocks[(a, b)] for b in listed]) for a in listed])

    def _lane(self, c: SSAValue, lane: int, n: SSAValue, tangent: SSAValue,
              sizes: list[SSAValue]) -> tuple[SSAValue | None, list[SSAValue]]:
        """Seeds e_(c+lane) into the lane's (zeroed) tangent; a lane past
        the end seeds nothing (a 0 stored at 0). Returns whether the lane is
        in range (None: always, one lane) and the indices of c+lane."""
        element = tangent.type.element_type  # type: ignore[attr-defined]
        if lane == 0:
            at = self._unravel(c, sizes)
            self.emit(memref.StoreOp.get(self.const_float(1.0, element), tangent, at))
            return None, at
        j = self.emit(arith.AddiOp(c, self.const_index(lane))).results[0]
        valid = self.emit(arith.CmpiOp(j, n, "ult")).results[0]
        at = self._unravel(self.emit(arith.SelectOp(valid, j, self.const_index(0))).results[0], sizes)
        one = self.emit(arith.SelectOp(valid, self.const_float(1.0, element), self.const_float(0.0, element)))
        self.emit(memref.StoreOp.get(one.results[0], tangent, at))
        return valid, at

    def _when(self, flag: SSAValue | None, body: Callable[[], None]) -> None:
        if flag is None:
            body()
            return
        block = Block()
        self.emit(scf.IfOp(flag, [], [block]))
        with self.inserting_at_end(block):
            body()
            self.emit(scf.YieldOp())

    # -- jacfwd: forward sweeps of g ---------------------------------------------------------

    def _forward_jacobian(self, callee, arguments: list[_Argument], listed: list[int], single: bool,  # type: ignore[no-untyped-def]
                          out_type) -> object:
        pristine = {k: a.value for k, a in enumerate(arguments) if a.value is not None}
        values = self._working_copies(arguments)
        tangents: dict[int, SSAValue] = {}
        for k, a in enumerate(arguments):
            if a.shadowed:
                tangents[k] = self._zeros_like(a.array, fill=False)  # type: ignore[arg-type]

        flat, activity = [], []
        for k, a in enumerate(arguments):
            if a.value is not None:
                flat += [values[k], tangents[k]] if k in tangents else [values[k]]
                activity.append("dup" if k in tangents else "const")

        results = []
        for b in listed:
            x = arguments[b].array
            assert x is not None
            sizes = [self.dim(x, d) for d in range(x.ndim)]
            out = Array(self.new_array(sizes, x.element))
            results.append(out)

            def column(j: SSAValue, b: int = b, sizes: list = sizes, out: Array = out) -> None:
                for q, a in enumerate(arguments):
                    if a.written:  # each sweep starts from the argument as passed
                        self.emit(memref.CopyOp(pristine[q], values[q]))
                for q in tangents:
                    self._fill(tangents[q], q, arguments, self.const_float(0.0, arguments[q].array.element))  # type: ignore[union-attr]
                at = self._unravel(j, sizes)
                self.emit(memref.StoreOp.get(self.const_float(1.0, out.element), tangents[b], at))
                sweep = self.emit(FwddiffOp(callee.sym_name.data, flat, activity, ["dup"], [out_type] * 2))
                self.emit(memref.StoreOp.get(self.convert_to(Scalar(sweep.results[1]), out.element, None),
                                             out.value, at))
            self._loop(self._count(sizes), column)
        return results[0] if single else TupleValue(results)

    # -- IR helpers -----------------------------------------------------------------------------

    def _zeros_like(self, a: Array, fill: bool = True) -> SSAValue:
        """A local array of a's sizes and element type (zeroed unless
        `fill` is False), as a value of a's type."""
        sizes = [self.dim(a, d) for d in range(a.ndim)]
        buffer = self.new_array(sizes, a.element)
        if fill:
            self.fill(buffer, sizes, self.const_float(0.0, a.element))
        own = MemRefType(a.element, [DYNAMIC_INDEX] * len(sizes))
        return buffer if own == a.type else self.emit(memref.CastOp.get(buffer, a.type)).results[0]

    def _fill(self, buffer: SSAValue, k: int, arguments: list[_Argument], value: SSAValue) -> None:
        a = arguments[k].array
        assert a is not None
        self.fill(buffer, [self.dim(Array(buffer), d) for d in range(a.ndim)], value)

    def _count(self, sizes: list[SSAValue]) -> SSAValue:
        n = self.const_index(1)
        for s in sizes:
            n = self.emit(arith.MuliOp(n, s)).results[0]
        return n

    def _unravel(self, j: SSAValue, sizes: list[SSAValue]) -> list[SSAValue]:
        """The indices of flat (C order) position j in an array of `sizes`."""
        indices = []
        rest = j
        for s in reversed(sizes[1:]):
            indices.append(self.emit(arith.RemUIOp(rest, s)).results[0])
            rest = self.emit(arith.DivUIOp(rest, s)).results[0]
        indices.append(rest)
        return indices[::-1]

    def _loop(self, n: SSAValue, body: Callable[[SSAValue], None], step: int = 1) -> None:
        block = Block(arg_types=[IndexType()])
        self.emit(scf.ForOp(self.const_index(0), n, self.const_index(step), [], block))
        with self.inserting_at_end(block):
            body(block.args[0])
            self.emit(scf.YieldOp())

    def _nest(self, sizes: list[SSAValue], body: Callable[[list[SSAValue]], object]) -> None:
        def level(depth: int, indices: list[SSAValue]) -> None:
            if depth == len(sizes):
                body(indices)
                return
            self._loop(sizes[depth], lambda i: level(depth + 1, [*indices, i]))
        level(0, [])

    def _element(self, m: SSAValue, indices: list[SSAValue], element) -> SSAValue:  # type: ignore[no-untyped-def]
        value = Scalar(self.emit(memref.LoadOp.get(m, indices)).results[0])
        return self.convert_to(value, element, None)
