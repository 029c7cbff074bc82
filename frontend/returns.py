"""`return`: structured as the results of scf.if.

A function may return at its end, or inside if statements (at any depth,
with elif chains): the statements after such an if are compiled into each
branch that does not always return, so every return becomes a value yielded
by nested scf.if ops. A return inside a loop is a CompileError.
"""

from __future__ import annotations

import ast

from xdsl.dialects import scf
from xdsl.ir import Block

from adpasses.frontend.control import always_returns, contains_return
from adpasses.frontend.effects import RAISED
from adpasses.frontend.values import Array, PyObject, Scalar


class ReturnMixin:
    def returning_statements(self, stmts: list[ast.stmt], node: ast.AST) -> Scalar | None:
        """Statements ending the function; the value they return."""
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

    def return_value(self, stmt: ast.Return) -> Scalar | None:
        if stmt.value is None:
            return None
        with self.at(stmt):
            value = self.expr(stmt.value)
        if isinstance(value, PyObject) and value.obj is None:
            return None  # `return None` is a bare return
        if isinstance(value, Array):
            self.error(stmt, "returning an array is not supported; write the result into an output "
                             "array argument instead")
        if not isinstance(value, Scalar):
            self.error(stmt, "only a single number can be returned")
        self.return_required = True
        return value

    def returning_if(self, stmt: ast.If, body: list[ast.stmt], orelse: list[ast.stmt]) -> Scalar | None:
        static = self.static_truth(stmt.test)  # `if radius is None: return ...` (calls.py)
        if static is not None:  # the branch not taken is not compiled
            return self.returning_statements(body if static else orelse, stmt)
        with self.at(stmt):
            cond = self.to_bool(self.scalar(stmt.test))
        blocks, values = [], []
        for branch in (body, orelse):
            block = Block()
            saved = dict(self.env)
            with self.inserting_at_end(block), self.allocation_scope():
                values.append(self.returning_statements(branch, stmt))
            self.env = saved
            blocks.append(block)
        if values[0] is RAISED and values[1] is RAISED:
            values = [None, None]
            result_raised = True
        else:
            result_raised = False
            for k in (0, 1):  # a branch that raises takes the other's kind of result (effects.py)
                if values[k] is RAISED:
                    other = values[1 - k]
                    with self.inserting_at_end(blocks[k]):
                        values[k] = None if other is None else self.placeholder(other)
        if (values[0] is None) != (values[1] is None):
            self.error(stmt, "one branch returns a value and the other does not")
        if values[0] is None:
            for block in blocks:
                with self.inserting_at_end(block), self.at(stmt):
                    self.emit(scf.YieldOp())
            with self.at(stmt):
                self.emit(scf.IfOp(cond, [], [blocks[0]], [blocks[1]]))
            return RAISED if result_raised else None
        t = self.common_type(values[0], values[1], stmt)
        for block, v in zip(blocks, values):
            with self.inserting_at_end(block), self.at(stmt):
                self.emit(scf.YieldOp(self.convert_to(v, t, stmt)))
        with self.at(stmt):
            result = self.emit(scf.IfOp(cond, [t], [blocks[0]], [blocks[1]])).results[0]
        return Scalar(result)
