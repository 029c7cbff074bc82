"""Loops: `for i in range(...)` and `while`, as scf.for / scf.while.

A loop carries, as iter_args, every scalar variable that exists before it
and is assigned in its body. A carried variable first seen as an int and
later assigned a float is carried as a float (the body is compiled again).
A variable first assigned inside a loop, the loop's targets included, is
carried (with a defined-flag: it is unbound after no iteration) when it is
read after the loop or by a later iteration (control.Liveness); otherwise
it is local to the body. Array variables the loop rebinds carry selectors
(array_vars.py). `for` also iterates over arrays, enumerate, zip and
reversed: a counter over the length binding the targets to the k-th items.

`range` with a positive literal step is an scf.for over the range itself;
any other step (negative, or not a literal) iterates a counter over the trip
count and computes `i = start + k * step`. A loop containing `break` becomes
an scf.while that also carries a "broken" flag (its condition is "in range
and not broken"); `continue` sets a per-iteration flag. The statements after
a `break`/`continue` that may have run are compiled under `if not flag:`
(see StatementMixin.statements). `else:` runs when the loop did not break.
"""

from __future__ import annotations

import ast
import builtins
import types
from collections.abc import Callable

from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import Float16Type, Float32Type, Float64Type, IndexType, StringAttr, f64, i1
from xdsl.ir import Attribute, Block, SSAValue

from adpasses.core.index_arith import INDEX_MAX, trip_count
from adpasses.core.parallel import prange
from adpasses.dialects.ad import PARALLEL_ATTR
from adpasses.frontend.array_vars import is_selector, selector_key
from adpasses.frontend.control import (BREAK, CONTINUE, RETURNED, assigned_names, contains_return, is_flag, loop_exits,
                                       maybe_unbound)
from adpasses.frontend.values import Array, PyObject, Scalar, TupleValue


class CarriedTypeChanged(Exception):
    """A carried variable needs a wider type than it had on entry (None: a
    variable first assigned in the loop is not a number, and is not carried)."""

    def __init__(self, name: str, new_type: Attribute | None):
        self.name, self.new_type = name, new_type


class CarriedTypes(dict):
    """name -> type of the variables a loop carries, in `carried` order;
    `guessed`: those first assigned in the loop whose type is a guess until
    the body is compiled."""

    def __init__(self) -> None:
        super().__init__()
        self.carried: list[str] = []
        self.guessed: set[str] = set()
        self.arrays: list[str] = []  # rebound array variables (their selectors are carried)

    def add(self, name: str, type_: Attribute, guessed: bool = False) -> None:
        self[name] = type_
        self.carried.append(name)
        if guessed:
            self.guessed.add(name)

    def drop(self, name: str) -> None:
        for n in (name, maybe_unbound(name)):
            if n in self:
                del self[n]
                self.carried.remove(n)
        self.guessed.discard(name)


def value_name(name: str) -> str | None:
    """An SSA name hint for a Python variable (None for the loop flags)."""
    return name if name.isascii() and name.isidentifier() else None


class LoopMixin:
    # -- for -------------------------------------------------------------------------

    def stmt_For(self, stmt: ast.For) -> None:
        call = stmt.iter
        if self._is_prange_call(call):
            self.prange_loop(stmt)
            return
        if not self._is_builtin_call(call, "range"):
            self.iteration_loop(stmt)
            return
        if not isinstance(stmt.target, ast.Name):
            self.error(stmt.target, "the loop variable must be a single name")
        lower, upper, stride, ascending, i_bound, start, step = self.range_loop_bounds(call)
        name = stmt.target.id

        def bind_loop_variable(k: SSAValue) -> None:
            if ascending:
                i = k
            else:
                i = self.emit(arith.AddiOp(start, self.emit(arith.MuliOp(k, step)).results[0])).results[0]
            if i_bound is not None:
                self.lower_bounds[i] = i_bound
            i.name_hint = value_name(name)
            self.env[name] = Scalar(i)
            self.env.pop(maybe_unbound(name), None)

        self.run_loop(stmt, lower, upper, stride, bind_loop_variable)

    def run_loop(self, stmt: ast.For, lower: SSAValue, upper: SSAValue, stride: SSAValue,
                 bind_loop_variable: Callable[[SSAValue], None]) -> None:
        if BREAK in loop_exits(stmt.body):
            broken = self.loop_with_break(stmt, lower, upper, stride, bind_loop_variable)
        else:
            self.counted_loop(stmt, lower, upper, stride, bind_loop_variable)
            broken = None
        self.after_loop(stmt)
        self.loop_else(stmt, broken)

    def after_loop(self, stmt: ast.For) -> None:
        """The loop's targets are local to it unless carried out of it (read
        after the loop: their last values, unbound after no iteration)."""
        for name in _target_names(stmt.target):
            if name not in self.carried_out.get(id(stmt), ()):
                self.env.pop(name, None)
                self.env.pop(maybe_unbound(name), None)

    def prange_loop(self, stmt: ast.For) -> None:
        """`for i in adpasses.prange(...)`: the scf.for of `range`, marked
        `ad.parallel = "prange"` (docs/parallel.md)."""
        if contains_return(stmt.body) or _sets_returned(stmt.body):  # a return lifted to a flag and a break
            self.error(stmt, "a prange loop cannot return from the function (its iterations run in "
                             "chunks on several threads); use range, or compute a flag and return after "
                             "the loop")
        if BREAK in loop_exits(stmt.body):
            self.error(stmt, "a prange loop cannot break (its iterations run in chunks on several "
                             "threads); use range")
        if CONTINUE in loop_exits(stmt.body):
            self.error(stmt, "a prange loop cannot continue (its sums must be plain `s += e`); put the "
                             "rest of the body under `if not ...:` instead, or use range")
        if stmt.orelse:
            self.error(stmt, "a prange loop cannot have an else clause; use range")
        call = stmt.iter
        assert isinstance(call, ast.Call)
        stmt.iter = ast.copy_location(ast.Call(func=ast.copy_location(ast.Name("range", ast.Load()), call.func),
                                               args=call.args, keywords=call.keywords), call)
        try:
            if not self._is_builtin_call(stmt.iter, "range"):
                self.error(call, "prange needs the builtin range (the name 'range' is rebound here)")
            self.prange_statements = getattr(self, "prange_statements", set()) | {id(stmt)}
            self.stmt_For(stmt)
        finally:
            stmt.iter = call

    def _is_prange_call(self, node: ast.expr) -> bool:
        """A call of `adpasses.prange` (by any name or module attribute)."""
        if not isinstance(node, ast.Call):
            return False
        fn = node.func
        if isinstance(fn, ast.Name) and fn.id not in self.env:
            return self._raw_global(fn.id) is prange
        if isinstance(fn, ast.Attribute) and isinstance(fn.value, ast.Name) and fn.value.id not in self.env:
            module = self._raw_global(fn.value.id)
            return isinstance(module, types.ModuleType) and getattr(module, fn.attr, None) is prange
        return False

    def _raw_global(self, name: str) -> object:
        code = self.pyfunc.__code__
        if name in code.co_freevars:
            cell = (self.pyfunc.__closure__ or ())[code.co_freevars.index(name)]
            try:
                return cell.cell_contents
            except ValueError:
                return None
        return self.pyfunc.__globals__.get(name)

    def _is_builtin_call(self, node: ast.expr, name: str) -> bool:
        return (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == name
                and node.func.id not in self.env and self.global_value(name, node.func) == PyObject(
                    getattr(builtins, name)))

    def range_loop_bounds(self, call: ast.Call):  # type: ignore[no-untyped-def]
        """scf.for bounds of `range(...)`: (lower, upper, stride, ascending,
        known minimum of i, start, step); a descending or non-literal step
        iterates a counter k over the trip count with i = start + k * step."""
        if not 1 <= len(call.args) <= 3 or call.keywords:
            self.error(call, "range() takes 1 to 3 integer arguments")
        args = [self.to_index(self.scalar(a), a) for a in call.args]
        start, stop, step = (
            (self.const_index(0), args[0], self.const_index(1)) if len(args) == 1
            else (args[0], args[1], args[2] if len(args) == 3 else self.const_index(1))
        )
        step_const = self.constant_index_of(call.args[2]) if len(args) == 3 else 1
        if step_const == 0:
            self.error(call, "range() step must not be zero")
        if step_const is None:  # Python's ValueError (was a ZeroDivisionError of the trip count)
            with self.at(call):
                zero = self.emit(arith.CmpiOp(step, self.const_index(0), "eq")).results[0]
                self.emit_raise_if(zero, "ValueError", "range() arg 3 must not be zero")
        ascending = step_const is not None and step_const > 0
        if ascending:
            lower, upper, stride = start, stop, step
        else:  # iterate k over the trip count: i = start + k * step
            lower, upper, stride = self.const_index(0), self.trip_count(start, stop, step, step_const), self.const_index(1)
        # A known minimum of i spares the negative-index wrap-around of x[i].
        if ascending:
            i_bound = 0 if len(args) == 1 else self.lower_bound(start, call.args[0])
        else:  # descending: i > stop
            stop_bound = self.lower_bound(stop, call.args[1]) if step_const is not None else None
            i_bound = None if stop_bound is None else stop_bound + 1
        return lower, upper, stride, ascending, i_bound, start, step

    # -- for over arrays, enumerate, zip, reversed -------------------------------------

    def iteration_loop(self, stmt: ast.For) -> None:
        """`for v in x`, `enumerate(...)`, `zip(...)`, `reversed(...)`: a
        counter k over the length (zip: the shortest), binding the targets
        to the k-th items (an element of a 1-D array, a row view of a
        deeper one) at the top of each iteration."""
        with self.at(stmt.iter):
            length, item = self.iterable(stmt.iter)

        def bind_items(k: SSAValue) -> None:
            self.lower_bounds[k] = 0
            self.bind_target(stmt.target, item(k), stmt)

        self.run_loop(stmt, self.const_index(0), length, self.const_index(1), bind_items)

    def bind_target(self, target: ast.expr, value: object, stmt: ast.stmt) -> None:
        if isinstance(target, ast.Name):
            if isinstance(value, Scalar) and isinstance(value.value, SSAValue) and not value.value.name_hint:
                value.value.name_hint = value_name(target.id)
            self.bind(target.id, value, stmt)
            return
        if isinstance(target, (ast.Tuple, ast.List)) and all(isinstance(e, (ast.Name, ast.Tuple, ast.List))
                                                             for e in target.elts):
            items = value.items if isinstance(value, TupleValue) else None
            if items is None or len(items) != len(target.elts):
                what = f"{len(items)} items" if items is not None else "not a tuple"
                self.error(target, f"cannot unpack {what} into {len(target.elts)} loop variables")
            for t, v in zip(target.elts, items):
                self.bind_target(t, v, stmt)
            return
        self.error(target, "loop variables must be names or tuples of names")

    def iterable(self, node: ast.expr):  # type: ignore[no-untyped-def]
        """(length, k -> k-th item) of what a for loop iterates over,
        evaluated once, before the loop."""
        if self._is_builtin_call(node, "range"):
            lower, upper, stride, ascending, i_bound, start, step = self.range_loop_bounds(node)
            length = upper if not ascending else self._range_length(lower, upper, stride)

            def range_item(k: SSAValue) -> Scalar:
                i = self.emit(arith.AddiOp(start, self.emit(arith.MuliOp(k, step)).results[0])).results[0]
                if i_bound is not None:
                    self.lower_bounds[i] = i_bound
                return Scalar(i)

            return length, range_item
        if self._is_builtin_call(node, "enumerate"):
            if not 1 <= len(node.args) <= 2 or (node.keywords and [k.arg for k in node.keywords] != ["start"]):
                self.error(node, "enumerate() takes an iterable and an optional start")
            first = node.args[1] if len(node.args) == 2 else (node.keywords[0].value if node.keywords else None)
            length, inner = self.iterable(node.args[0])
            offset = self.to_index(self.scalar(first), first) if first is not None else None
            known = 0 if first is None else self.constant_index_of(first)

            def enumerate_item(k: SSAValue) -> TupleValue:
                i = k if offset is None else self.emit(arith.AddiOp(k, offset)).results[0]
                if known is not None and known >= 0:
                    self.lower_bounds[i] = known
                return TupleValue([Scalar(i), inner(k)])

            return length, enumerate_item
        if self._is_builtin_call(node, "zip"):
            if not node.args or node.keywords:
                self.error(node, "zip() takes one or more iterables (no keywords)")
            parts = [self.iterable(a) for a in node.args]
            length = parts[0][0]
            for n, _ in parts[1:]:
                length = self.emit(arith.MinSIOp(length, n)).results[0]
            return length, lambda k: TupleValue([item(k) for _, item in parts])
        if self._is_builtin_call(node, "reversed"):
            if len(node.args) != 1 or node.keywords:
                self.error(node, "reversed() takes one sequence")
            length, inner = self.iterable(node.args[0])

            def reversed_item(k: SSAValue) -> object:
                last = self.emit(arith.SubiOp(length, self.const_index(1))).results[0]
                j = self.emit(arith.SubiOp(last, k)).results[0]
                self.lower_bounds[j] = 0
                return inner(j)

            return length, reversed_item
        value = self.expr(node)
        if isinstance(value, Array):
            if value.ndim == 0:
                self.error(node, "iteration over a 0-d array")
            return self.dim(value, 0), lambda k: self.array_item(value, k, node)
        self.error(node, "a for loop iterates over range(...), an array (its elements, or its rows), "
                         "enumerate(...), zip(...) or reversed(...); "
                         f"{_describe(node)} is not one of those")

    def _range_length(self, lower: SSAValue, upper: SSAValue, stride: SSAValue) -> SSAValue:
        return trip_count(self.emit, lower, upper, stride)

    def array_item(self, a: Array, k: SSAValue, node: ast.AST) -> object:
        """x[k] for 0 <= k < len(x): an element of a 1-D array, a row view of
        a deeper one."""
        name = "!item"
        self.env[name] = Scalar(k)
        try:
            index = ast.copy_location(ast.Name(name, ast.Load()), node)
            return self.load_or_view(a, ast.copy_location(ast.Subscript(node, index, ast.Load()), node))
        finally:
            self.env.pop(name, None)


    def counted_loop(self, stmt: ast.For, lower: SSAValue, upper: SSAValue, stride: SSAValue,
                     bind_loop_variable: Callable[[SSAValue], None]) -> None:
        types = self.carried_types(stmt)
        carried = types.carried

        def build(attempt: list[Block]) -> list[Block]:
            block = Block(arg_types=[IndexType(), *(types[n] for n in carried)])
            attempt.append(block)
            with self.inserting_at_end(block):
                self.bind_carried(carried, block.args[1:])
                with self.allocation_scope():
                    bind_loop_variable(block.args[0])
                    self.loop_body(stmt.body)
                    yields = self.carried_values(carried, types, stmt)
                self.emit(scf.YieldOp(*yields))
            return [block]

        [block] = self.until_types_settle(types, build)
        op = self.emit(scf.ForOp(lower, upper, stride, self.carried_inits(carried, types, stmt), block))
        if id(stmt) in getattr(self, "prange_statements", ()):
            op.attributes[PARALLEL_ATTR] = StringAttr("prange")
        self.bind_results(carried, op.results)
        if types.arrays:
            with self.at(stmt):
                self.finish_selection(types.arrays, stmt)

    def loop_with_break(self, stmt: ast.For, lower: SSAValue, upper: SSAValue, stride: SSAValue,
                        bind_loop_variable: Callable[[SSAValue], None]) -> SSAValue:
        """for-with-break as scf.while over (counter, broken, carried...);
        returns the final "broken" flag."""
        types = self.carried_types(stmt)
        carried = types.carried

        def build(attempt: list[Block]) -> list[Block]:
            state = [IndexType(), i1, *(types[n] for n in carried)]
            before, after = Block(arg_types=state), Block(arg_types=state)
            attempt += [before, after]
            with self.inserting_at_end(before), self.at(stmt):
                in_range = self.emit(arith.CmpiOp(before.args[0], upper, "slt")).results[0]
                go = self.emit(arith.AndIOp(in_range, self.negation(before.args[1]))).results[0]
                self.emit(scf.ConditionOp(go, *before.args))
            self.env[BREAK] = Scalar(self.const_bool(False))  # the condition checked it
            with self.inserting_at_end(after):
                self.bind_carried(carried, after.args[2:])
                with self.allocation_scope():
                    bind_loop_variable(after.args[0])
                    self.loop_body(stmt.body)
                    broken = self.env[BREAK].value
                    yields = self.carried_values(carried, types, stmt)
                with self.at(stmt):
                    following = self.emit(arith.AddiOp(after.args[0], stride)).results[0]
                    self.emit(scf.YieldOp(following, broken, *yields))
            return [before, after]

        before, after = self.until_types_settle(types, build)
        inits = [lower, self.const_bool(False), *self.carried_inits(carried, types, stmt)]
        op = self.emit(scf.WhileOp(inits, [a.type for a in before.args], [before], [after]))
        self.bind_results(carried, op.results[2:])
        if types.arrays:
            with self.at(stmt):
                self.finish_selection(types.arrays, stmt)
        return op.results[1]

    def trip_count(self, start: SSAValue, stop: SSAValue, step: SSAValue, step_const: int | None) -> SSAValue:
        """Iterations of range(start, stop, step) for any nonzero step, exact
        (no wrap-around for spans beyond 2**63; adpasses.core.index_arith)."""
        # range(start, stop, -s) runs as often as range(stop, start, s) does.
        # (0 - step wraps for step = -2**63, to the unsigned 2**63 that
        # trip_count divides by: still right.)
        neg_step = (self.const_index(-step_const) if step_const is not None and -step_const <= INDEX_MAX
                    else self.emit(arith.SubiOp(self.const_index(0), step)).results[0])
        down = trip_count(self.emit, stop, start, neg_step)
        if step_const is not None:
            return down
        up = trip_count(self.emit, start, stop, step)
        positive = self.emit(arith.CmpiOp(step, self.const_index(0), "sgt")).results[0]
        return self.emit(arith.SelectOp(positive, up, down)).results[0]

    def lower_bound(self, value: SSAValue, node: ast.expr) -> int | None:
        c = self.constant_index_of(node)
        return c if c is not None else self.lower_bounds.get(value)

    # -- while -----------------------------------------------------------------------

    def stmt_While(self, stmt: ast.While) -> None:
        types = self.carried_types(stmt)
        carried = types.carried
        has_break = BREAK in loop_exits(stmt.body)
        flag = [i1] if has_break else []

        def build(attempt: list[Block]) -> list[Block]:
            state = [*flag, *(types[n] for n in carried)]
            before, after = Block(arg_types=state), Block(arg_types=state)
            attempt += [before, after]
            with self.inserting_at_end(before):
                self.bind_carried(carried, before.args[len(flag):])
                if has_break:  # never evaluate the test after a break
                    go = self.unless(before.args[0], lambda: self.to_bool(self.scalar(stmt.test)), stmt)
                else:
                    go = self.to_bool(self.scalar(stmt.test))
                with self.at(stmt):
                    self.emit(scf.ConditionOp(go, *before.args))
            if has_break:
                self.env[BREAK] = Scalar(self.const_bool(False))
            with self.inserting_at_end(after):
                self.bind_carried(carried, after.args[len(flag):])
                with self.allocation_scope():
                    self.loop_body(stmt.body)
                    broken = [self.env[BREAK].value] if has_break else []
                    yields = self.carried_values(carried, types, stmt)
                with self.at(stmt):
                    self.emit(scf.YieldOp(*broken, *yields))
            return [before, after]

        before, after = self.until_types_settle(types, build)
        inits = [self.const_bool(False)] * len(flag) + self.carried_inits(carried, types, stmt)
        op = self.emit(scf.WhileOp(inits, [a.type for a in before.args], [before], [after]))
        self.bind_results(carried, op.results[len(flag):])
        if types.arrays:
            with self.at(stmt):
                self.finish_selection(types.arrays, stmt)
        self.loop_else(stmt, op.results[0] if has_break else None)

    def unless(self, flag: SSAValue, test: Callable[[], SSAValue], node: ast.AST) -> SSAValue:
        """`False if flag else test()`, evaluating test only when needed."""
        then_block, else_block = Block(), Block()
        with self.inserting_at_end(then_block), self.at(node):
            self.emit(scf.YieldOp(self.const_bool(False)))
        with self.inserting_at_end(else_block):
            value = test()
            with self.at(node):
                self.emit(scf.YieldOp(value))
        with self.at(node):
            return self.emit(scf.IfOp(flag, [i1], [then_block], [else_block])).results[0]

    # -- shared ------------------------------------------------------------------------

    def loop_body(self, body: list[ast.stmt]) -> None:
        if CONTINUE in loop_exits(body):
            self.env[CONTINUE] = Scalar(self.const_bool(False))
        self.statements(body)

    def loop_else(self, stmt: ast.For | ast.While, broken: SSAValue | None) -> None:
        """`for/while ... else:` runs when the loop ended without break."""
        if not stmt.orelse:
            return
        if broken is None:
            self.statements(stmt.orelse)
            return
        with self.at(stmt.orelse[0]):
            self.conditional(self.negation(broken), stmt.orelse, [], stmt.orelse[0])

    def carried_types(self, stmt: ast.For | ast.While) -> CarriedTypes:
        """The variables a loop carries and their types: every scalar
        variable existing before it and assigned in it, and every variable
        first assigned in it (the targets of a for loop included) that is
        read after it or by a later iteration (with a defined-flag, and a
        type known once the body is compiled: float64 is the first guess).
        The loop's own break/continue flags are handled by the loop itself."""
        live = self.liveness.live_after(stmt)
        entry = self.liveness.entry.get(id(stmt))
        targets = _target_names(stmt.target) if isinstance(stmt, ast.For) else []

        def wanted(name: str) -> bool:
            """Read after the loop, or (not a target, which each iteration
            binds first) by an iteration before the body assigns it."""
            if live is None or entry is None:
                return True
            return name in live or (name not in targets and name in entry)

        types = CarriedTypes()
        rebound: list[str] = []
        for name in [*targets, *assigned_names(stmt.body)]:
            value = self.env.get(name)
            if name in (BREAK, CONTINUE) or name in types:
                continue
            if isinstance(value, Array):
                if name not in targets:
                    rebound.append(name)
            elif isinstance(value, Scalar) and (name not in targets or wanted(name)):
                types.add(name, value.type)
                if maybe_unbound(name) in self.env:
                    types.add(maybe_unbound(name), i1)
            elif value is None and wanted(name):
                types.add(name, f64, guessed=True)
                types.add(maybe_unbound(name), i1)
        if rebound:  # array variables the loop rebinds: carried as selectors among its arrays
            self.start_selection(rebound, stmt)
            for name in rebound:
                types.add(selector_key(name), IndexType())
            types.arrays = rebound
        self.carried_out[id(stmt)] = set(types.carried)
        return types

    def bind_carried(self, carried: list[str], values: list[SSAValue]) -> None:
        """In the body a carried variable is what Python holds on entry: a
        numpy scalar, an np.int32 (`Scalar.numpy`, `.int32`) if it was one."""
        entry = self._carried_kinds[-1].entry if getattr(self, "_carried_kinds", None) else {}
        for n, v in zip(carried, values):
            v.name_hint = value_name(n)
            numpy, int32 = entry.get(n, (False, False))
            self.env[n] = Scalar(v, numpy=numpy, int32=int32 and isinstance(v.type, IndexType))
        for n in carried:
            if is_selector(n):  # a rebound array variable: the array its selector picks
                self.select_array(n[1:])

    def bind_results(self, carried: list[str], results: list[SSAValue]) -> None:
        """After the loop a carried variable is a numpy scalar (an np.int32)
        if it was one on entry or the body made it one (`s = 0.0; s += x[i]`
        is np.float64 once the loop ran: what it prints as)."""
        kinds = getattr(self, "_settled_kinds", None)
        for n, r in zip(carried, results):
            r.name_hint = value_name(n)
            numpy, int32 = kinds.after(n) if kinds is not None else (False, False)
            self.env[n] = Scalar(r, numpy=numpy, int32=int32 and isinstance(r.type, IndexType))

    def carried_inits(self, carried: list[str], types: dict, stmt: ast.stmt) -> list[SSAValue]:
        inits = []
        for n in carried:
            if is_flag(n):
                inits.append(self.defined_flag(self.env, n[1:]))
            elif n not in self.env:  # first assigned in the loop: unbound on entry
                inits.append(self.zero_of(types[n]))
            else:
                inits.append(self.convert_to(self.env[n], types[n], stmt))
        return inits

    def until_types_settle(self, types: dict[str, Attribute],
                           build: Callable[[list[Block]], list[Block]]) -> list[Block]:
        """Compile a loop body with these carried types, widening a type
        and compiling again when the body assigns a wider value. `build`
        appends the blocks it creates to the list it is given."""
        entry = {n: (v.numpy, v.int32) for n, v in self.env.items() if isinstance(v, Scalar)}
        stack = self.__dict__.setdefault("_carried_kinds", [])
        while True:
            saved_env = dict(self.env)
            attempt: list[Block] = []
            stack.append(CarriedKinds(entry))
            try:
                blocks = build(attempt)
                self._settled_kinds = stack[-1]
                return blocks
            except CarriedTypeChanged as change:
                if change.new_type is None:  # not a number: local to the loop after all
                    assert isinstance(types, CarriedTypes)
                    types.drop(change.name)
                else:
                    types[change.name] = change.new_type
                    if isinstance(types, CarriedTypes):
                        types.guessed.discard(change.name)
                for block in attempt:  # so that no constant stays used by it
                    block.drop_all_references()
            finally:
                stack.pop()
                self.env = saved_env

    def carried_values(self, carried: list[str], types: dict, stmt: ast.stmt) -> list[SSAValue]:
        values = []
        guessed = types.guessed if isinstance(types, CarriedTypes) else set()
        for n in carried:
            if is_flag(n):
                values.append(self.defined_flag(self.env, n[1:]))
                continue
            v = self.env.get(n)
            if n in guessed:  # first assigned in the loop: now its type is known
                if not isinstance(v, Scalar):
                    raise CarriedTypeChanged(n, None)
                if v.type != types[n]:
                    raise CarriedTypeChanged(n, v.type)
            if not isinstance(v, Scalar):
                self.error(stmt, f"variable '{n}' changes from a number to something else in the loop")
            if getattr(self, "_carried_kinds", None):
                self._carried_kinds[-1].yielded(n, v)
            if v.type != types[n]:
                wider = _wider_type(types[n], v)
                if wider is not None:
                    raise CarriedTypeChanged(n, wider)
            values.append(self.convert_to(v, types[n], stmt))
        return values


class CarriedKinds:
    """Whether Python holds each carried variable as a numpy scalar / an
    np.int32 (`Scalar.numpy`, `.int32`): on entry (what the body binds:
    the first iteration's; later iterations differ only where the body
    makes it one, and int32 wrapping at the end of each iteration gives the
    same bits), and what the body yields (one iteration or more: after the
    loop, entry or yielded)."""

    def __init__(self, entry: dict[str, tuple[bool, bool]]):
        self.entry = entry
        self._yielded: dict[str, tuple[bool, bool]] = {}

    def yielded(self, name: str, value: Scalar) -> None:
        numpy, int32 = self._yielded.get(name, (False, False))
        self._yielded[name] = (numpy or value.numpy, int32 or value.int32)

    def after(self, name: str) -> tuple[bool, bool]:
        a, b = self.entry.get(name, (False, False)), self._yielded.get(name, (False, False))
        return a[0] or b[0], a[1] or b[1]


def _is_float(t: Attribute) -> bool:
    return isinstance(t, (Float64Type, Float32Type, Float16Type))


def _wider_type(carried: Attribute, value: Scalar) -> Attribute | None:
    """The type a carried variable must widen to hold `value`, or None when
    `value` converts to the carried type. An int (or bool) variable that is
    assigned a float becomes a float64, as does a float32 variable assigned
    a float64; a bool variable assigned an int becomes an int."""
    if (isinstance(carried, IndexType) or carried == i1) and value.is_float:
        return f64
    if carried == i1 and value.is_int:
        return IndexType()
    if _is_float(carried) and not isinstance(carried, Float64Type) and isinstance(value.type, Float64Type):
        return f64
    return None


def _target_names(target: ast.expr) -> list[str]:
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [n for e in target.elts for n in _target_names(e)]
    return []


def _describe(node: ast.AST) -> str:
    try:
        return f"'{ast.unparse(node)}'"
    except Exception:  # noqa: BLE001
        return type(node).__name__


def _sets_returned(stmts: list[ast.stmt]) -> bool:
    """`stmts` set the flag of a return that lift_loop_returns moved out of
    the loop (frontend/control.py)."""
    return any(isinstance(n, ast.Name) and n.id == RETURNED and isinstance(n.ctx, ast.Store)
               for s in stmts for n in ast.walk(s))
