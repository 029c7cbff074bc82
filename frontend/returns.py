"""`return`: structured as the results of scf.if; array and tuple results.

A function may return at its end, or inside if statements (at any depth,
with elif chains): the statements after such an if are compiled into each
branch that does not always return, so every return becomes a value yielded
by nested scf.if ops. Returns inside loops are rewritten before (control.py).

A function returns nothing, a number, an array, or a flat tuple of numbers
and arrays (`return energy, forces`); each becomes one result of the
`func.func`. Who owns a returned array is decided here, once per result
(`ResultKind`), so that callers and the Python entry know without looking:

- the final `return` of a local array of the function's own scope (or of a
  view of one, or of an array a callee handed over): the array is not freed
  at the end of the function, its buffer goes to the caller (`OWNED`);
- the final `return` of an argument or a view of one: the caller's memory,
  returned as it is (`ResultKind(argument=k)`): from Python, the argument
  itself, or a numpy view of it, as numpy would return;
- an array returned from inside an if (an early return), or the second
  appearance of one buffer in a tuple: a fresh copy (`OWNED`), so that every
  path agrees on who frees it.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from xdsl.dialects import memref, scf
from xdsl.dialects.builtin import DYNAMIC_INDEX, Float32Type, IndexType, MemRefType
from xdsl.ir import Block, SSAValue

from adpasses.analysis.memref_views import memory_object
from adpasses.frontend.control import always_returns, contains_return
from adpasses.frontend.effects import RAISED
from adpasses.frontend.values import Array, PyObject, Scalar, TupleValue


@dataclass(frozen=True)
class ResultKind:
    """What one result of a compiled function is: a number; an array whose
    buffer the caller receives and must free (`owned`); or an array in the
    memory of argument `argument` (borrowed: nobody frees it)."""

    array: bool = False
    argument: int | None = None
    numpy: bool = False  # a number Python holds as a numpy scalar (Scalar.numpy)
    int32: bool = False  # ... as an np.int32 (Scalar.int32)
    float32: bool = False  # ... as an np.float32 (returned widened to f64, exactly)
    dtype: str = ""  # a numpy scalar's dtype name ("float32", "int64", "bool", ...); "" otherwise

    @property
    def owned(self) -> bool:
        return self.array and self.argument is None


SCALAR = ResultKind()
OWNED = ResultKind(array=True)


@dataclass(frozen=True)
class FunctionResults:
    """The results of a compiled function: their kinds, and whether Python
    returned them as a tuple (`return a, b`) or one value."""

    kinds: tuple[ResultKind, ...]
    is_tuple: bool


class ReturnMixin:
    def returning_statements(self, stmts: list[ast.stmt], node: ast.AST) -> object | None:
        """Statements ending the function; the value they return (a Scalar,
        an Array or a TupleValue of those)."""
        for k, stmt in enumerate(stmts):
            rest = stmts[k + 1 :]
            if isinstance(stmt, ast.Return):
                if rest:
                    self.error(rest[0], "code after return is never run; remove it")
                return self.return_value(stmt)
            if isinstance(stmt, ast.Raise):  # the rest is never run (effects.py)
                self.statement(stmt)
                return RAISED
            if isinstance(stmt, ast.If) and contains_return([stmt]):
                body_returns, else_returns = always_returns(stmt.body), always_returns(stmt.orelse)
                if body_returns and else_returns and rest:
                    self.error(rest[0], "code after an if whose branches both return is never run")
                body = stmt.body if body_returns else stmt.body + rest
                orelse = stmt.orelse if else_returns else stmt.orelse + rest
                return self.returning_if(stmt, body, orelse)
            self.statement(stmt)
        if self.return_required:
            self.error(node, "not every path returns a value: add a return at the end")
        return None

    def return_value(self, stmt: ast.Return) -> object | None:
        if stmt.value is None:
            return None
        with self.at(stmt):
            value = self.expr(stmt.value)
            # array expressions (array_exprs.py): computed into local arrays
            value = self.materialize(value, stmt)
            if isinstance(value, TupleValue):
                value = TupleValue([self.materialize(v, stmt) for v in value.items])
        if isinstance(value, PyObject) and value.obj is None:
            return None  # `return None` is a bare return
        self.check_returnable(value, stmt)
        self.return_required = True
        return value

    def check_returnable(self, value: object, stmt: ast.AST) -> None:
        """A number, an array, or a flat tuple of two or more of those."""
        if isinstance(value, (Scalar, Array)):
            return
        if isinstance(value, TupleValue):
            if len(value.items) < 2:
                self.error(stmt, "returning a tuple of fewer than two values is not supported; "
                                 "return the value itself")
            for item in value.items:
                if not isinstance(item, (Scalar, Array)):
                    self.error(stmt, "a returned tuple may hold only numbers and arrays (no nested "
                                     "tuples, shapes or functions); return them one by one: "
                                     "return a, b, c")
            return
        self.error(stmt, "only a number, an array or a tuple of numbers and arrays can be returned")

    def loop_return_error(self, value: object, stmt: ast.AST) -> None:
        """A return inside a loop of something that is not a number (the
        rewrite carries the returned value out of the loop in a variable)."""
        what = "an array" if isinstance(value, Array) else "this value"
        self.error(stmt, f"returning {what} from inside a loop is not supported (only numbers, or a "
                         "tuple display of numbers: return value, index); break out of the loop and "
                         "return it after the loop")

    def returning_if(self, stmt: ast.If, body: list[ast.stmt], orelse: list[ast.stmt]) -> object | None:
        static = self.static_truth(stmt.test)  # `if radius is None: return ...` (calls.py)
        if static is not None:  # the branch not taken is not compiled
            return self.returning_statements(body if static else orelse, stmt)
        with self.at(stmt):
            cond = self.to_bool(self.scalar(stmt.test))
        blocks, values = [], []
        for branch in (body, orelse):
            block = Block()
            saved = dict(self.env)
            with self.inserting_at_end(block):
                with self.allocation_scope():
                    value = self.returning_statements(branch, stmt)
                    # A returned array leaves the branch as a fresh copy:
                    # the branch's own arrays are freed at its end, and
                    # whatever the branch returned, the caller owns it.
                    value = self._owned_copies(value, stmt)
            self.env = saved
            blocks.append(block)
            values.append(value)
        if values[0] is RAISED and values[1] is RAISED:
            values = [None, None]
            result_raised = True
        else:
            result_raised = False
            for k in (0, 1):  # a branch that raises takes the other's kind of result (effects.py)
                if values[k] is RAISED:
                    other = values[1 - k]
                    with self.inserting_at_end(blocks[k]), self.at(stmt):
                        values[k] = None if other is None else self._placeholder(other)
        if (values[0] is None) != (values[1] is None):
            self.error(stmt, "one branch returns a value and the other does not")
        if values[0] is None:
            for block in blocks:
                with self.inserting_at_end(block), self.at(stmt):
                    self.emit(scf.YieldOp())
            with self.at(stmt):
                self.emit(scf.IfOp(cond, [], [blocks[0]], [blocks[1]]))
            return RAISED if result_raised else None
        items = [_items(v) for v in values]
        if len(items[0]) != len(items[1]) or isinstance(values[0], TupleValue) != isinstance(values[1], TupleValue):
            self.error(stmt, f"the branches return different things ({_describe(values[0])} and "
                             f"{_describe(values[1])}); return the same kinds of values on every path")
        types = []
        for a, b in zip(*items):
            types.append(self._merged_type(a, b, stmt, values))
        for block, branch_items in zip(blocks, items):
            with self.inserting_at_end(block), self.at(stmt):
                yielded = [v.value if isinstance(v, Array) else self.convert_to(v, t, stmt)
                           for v, t in zip(branch_items, types)]
                self.emit(scf.YieldOp(*yielded))
        with self.at(stmt):
            results = self.emit(scf.IfOp(cond, types, [blocks[0]], [blocks[1]])).results
        # a numpy scalar (an np.int32) when both branches return one
        merged = [Array(r) if isinstance(r.type, MemRefType) else
                  Scalar(r, numpy=a.numpy and b.numpy, int32=a.int32 and b.int32 and isinstance(r.type, IndexType))
                  for r, a, b in zip(results, *items)]
        for r in merged:
            if isinstance(r, Array):
                self._returned_copies.add(r.value)
        return TupleValue(merged) if isinstance(values[0], TupleValue) else merged[0]

    def _placeholder(self, like: object) -> object:
        """A value of `like`'s kind where it is never used (after a raise):
        for an array, an empty one of its type."""
        if isinstance(like, TupleValue):
            return TupleValue([self._placeholder(v) for v in like.items])
        if isinstance(like, Array):
            zero = self.const_index(0)
            empty = self.emit(memref.AllocOp([zero] * like.ndim, [], MemRefType(like.element, [DYNAMIC_INDEX] * like.ndim)))
            return Array(empty.results[0])
        return self.placeholder(like)

    def _merged_type(self, a: object, b: object, stmt: ast.If, values: list[object]):  # type: ignore[no-untyped-def]
        if isinstance(a, Scalar) and isinstance(b, Scalar):
            return self.common_type(a, b, stmt)
        if isinstance(a, Array) and isinstance(b, Array):
            if a.type == b.type:
                return a.type
            self.error(stmt, f"the branches return arrays of different types ({a.element} of "
                             f"{a.ndim} dimension(s) and {b.element} of {b.ndim}); return arrays of "
                             "one dtype and number of dimensions on every path")
        self.error(stmt, f"the branches return different things ({_describe(values[0])} and "
                         f"{_describe(values[1])}); return the same kinds of values on every path")

    def _owned_copies(self, value: object, node: ast.AST) -> object:
        """`value` with each array replaced by a fresh C-contiguous copy that
        no scope frees (the function's caller will)."""
        if isinstance(value, Array):
            if value.value in self._returned_copies:
                return value  # already a copy made for a nested if
            if self.release_allocation(value.value):
                # The branch's own array (not a view of it): handed over as it is.
                self._returned_copies.add(value.value)
                return value
            return self.fresh_copy(value, node)
        if isinstance(value, TupleValue):
            return TupleValue([self._owned_copies(v, node) for v in value.items])
        return value

    def fresh_copy(self, a: Array, node: ast.AST) -> Array:
        """A new C-contiguous array with a's contents (memref.alloc + memref.copy),
        not registered for deallocation."""
        with self.at(node):
            sizes = [self.dim(a, k) for k in range(a.ndim)]
            mtype = MemRefType(a.element, [DYNAMIC_INDEX] * a.ndim)
            buffer = self.emit(memref.AllocOp(sizes, [], mtype)).results[0]
            self.emit(memref.CopyOp(a.value, buffer))
        self._returned_copies.add(buffer)
        return Array(buffer)

    # -- the function's results --------------------------------------------------------

    def function_results(self, result: object | None, node: ast.AST) -> tuple[list[SSAValue], FunctionResults]:
        """The values `func.return` returns and their kinds, for what the
        function body returned. Called inside the function's allocation
        scope: a returned local array is taken out of it (not freed)."""
        if result is None:
            return [], FunctionResults((), False)
        items = _items(result)
        values: list[SSAValue] = []
        kinds: list[ResultKind] = []
        handed: set[SSAValue] = set()  # buffers already returned by an earlier item
        arguments = list(self.entry.args)
        for item in items:
            if isinstance(item, Scalar):
                values.append(self.returned_value(item))
                # An f32 value is an np.float32 in Python, flagged or not.
                float32 = item.is_float and isinstance(item.type, Float32Type)
                if item.numpy or float32:
                    dtype = ("float32" if float32 else "float64" if item.is_float else "bool" if item.is_bool
                             else "int32" if item.int32 else "int64")
                    kinds.append(ResultKind(numpy=True, int32=item.int32, float32=float32, dtype=dtype))
                else:
                    kinds.append(SCALAR)
                continue
            root = self.memory_root(item.value)
            if root in handed:
                kind = None  # the same buffer twice: the second is a copy
            elif root in arguments:
                kind = ResultKind(array=True, argument=arguments.index(root))
            elif root in self._returned_copies or self.release_allocation(root):
                kind = OWNED
            else:
                kind = None  # not the function's own top-level buffer: a copy
            if kind is None:
                item = self.fresh_copy(item, node)
                root, kind = item.value, OWNED
            values.append(item.value)
            kinds.append(kind)
            handed.add(root)
        return values, FunctionResults(tuple(kinds), isinstance(result, TupleValue))

    def memory_root(self, value: SSAValue) -> SSAValue:
        """The argument, allocation or call result whose memory `value`
        addresses (through views, and through the results of callees that
        return a view of their argument)."""
        while True:
            value = memory_object(value)
            source = self._borrowed.get(value)
            if source is None:
                return value
            value = source


def _items(value: object) -> list[object]:
    return list(value.items) if isinstance(value, TupleValue) else [value]


def _describe(value: object) -> str:
    if isinstance(value, TupleValue):
        return f"a tuple of {len(value.items)}"
    if isinstance(value, Array):
        return "an array"
    return "a number"
