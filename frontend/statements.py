"""Statements: assignments, loops, branches and returns, as structured IR.

Python locals become SSA values. A loop carries, as scf iter_args, every
scalar variable that exists before it and is assigned in its body; an if
yields every scalar variable assigned in a branch that exists before it (or
is assigned in both branches). A carried variable first seen as an int and
later assigned a float is carried as a float (the loop is compiled again).
Variables first assigned inside a loop or a single branch are local to it.

`return` may end the function, or end both branches of a final if (an
`if c: return a` followed by more statements makes those statements the
else branch).
"""

from __future__ import annotations

import ast

from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import Float64Type, IndexType, f64
from xdsl.ir import Attribute, Block, SSAValue

from adpasses.frontend.values import Array, Scalar, TupleValue


class _CarriedTypeChanged(Exception):
    def __init__(self, name: str, new_type: Attribute):
        self.name, self.new_type = name, new_type


def assigned_names(stmts: list[ast.stmt]) -> list[str]:
    """Names bound by assignments anywhere in `stmts` (in order, once)."""
    names: dict[str, None] = {}

    def targets(t: ast.expr) -> None:
        if isinstance(t, ast.Name):
            names[t.id] = None
        elif isinstance(t, (ast.Tuple, ast.List)):
            for e in t.elts:
                targets(e)

    for stmt in stmts:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Assign):
                for t in node.targets:
                    targets(t)
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
                targets(node.target)
            elif isinstance(node, ast.For):
                targets(node.target)
    return list(names)


def _ends_with_return(stmts: list[ast.stmt]) -> bool:
    return bool(stmts) and isinstance(stmts[-1], ast.Return)


class StatementMixin:
    # -- blocks ------------------------------------------------------------------

    def statements(self, stmts: list[ast.stmt]) -> None:
        """Statements that must not return."""
        for stmt in stmts:
            if isinstance(stmt, ast.Return):
                self.error(stmt, "return is only supported at the end of the function (or at the end "
                                 "of both branches of a final if); assign to a variable and return it at the end")
            self.statement(stmt)

    def returning_statements(self, stmts: list[ast.stmt], node: ast.AST) -> Scalar | None:
        """Statements ending the function: returns the returned value."""
        for k, stmt in enumerate(stmts):
            rest = stmts[k + 1 :]
            if isinstance(stmt, ast.Return):
                if rest:
                    self.error(rest[0], "code after return is never run; remove it")
                return self.return_value(stmt)
            if isinstance(stmt, ast.If) and _ends_with_return(stmt.body):
                orelse = stmt.orelse or rest
                if stmt.orelse and rest:
                    self.error(rest[0], "code after an if whose branches both return is never run")
                return self.returning_if(stmt, orelse)
            self.statement(stmt)
        if self.return_required:
            self.error(node, "not every path returns a value: add a return at the end")
        return None

    def return_value(self, stmt: ast.Return) -> Scalar | None:
        if stmt.value is None:
            return None
        with self.at(stmt):
            value = self.expr(stmt.value)
        if isinstance(value, Array):
            self.error(stmt, "returning an array is not supported; write the result into an output "
                             "array argument instead")
        if not isinstance(value, Scalar):
            self.error(stmt, "only a single number can be returned")
        self.return_required = True
        return value

    def returning_if(self, stmt: ast.If, orelse: list[ast.stmt]) -> Scalar | None:
        with self.at(stmt):
            cond = self.to_bool(self.scalar(stmt.test))
        blocks, values = [], []
        for body in (stmt.body, orelse):
            block = Block()
            saved = dict(self.env)
            with self.inserting_at_end(block), self.allocation_scope():
                values.append(self.returning_statements(body, stmt))
            self.env = saved
            blocks.append(block)
        if (values[0] is None) != (values[1] is None):
            self.error(stmt, "one branch returns a value and the other does not")
        if values[0] is None:
            for block in blocks:
                with self.inserting_at_end(block):
                    self.emit(scf.YieldOp())
            with self.at(stmt):
                self.emit(scf.IfOp(cond, [], [blocks[0]], [blocks[1]]))
            return None
        t = self.common_type(values[0], values[1], stmt)
        for block, v in zip(blocks, values):
            with self.inserting_at_end(block), self.at(stmt):
                self.emit(scf.YieldOp(self.convert_to(v, t, stmt)))
        with self.at(stmt):
            result = self.emit(scf.IfOp(cond, [t], [blocks[0]], [blocks[1]])).results[0]
        return Scalar(result)

    def statement(self, stmt: ast.stmt) -> None:
        method = getattr(self, f"stmt_{type(stmt).__name__}", None)
        if method is None:
            self.error(stmt, f"{type(stmt).__name__.lower()} statements are not supported in compiled "
                             "functions" + _HINTS.get(type(stmt).__name__, ""))
        with self.at(stmt):
            method(stmt)

    # -- simple statements -----------------------------------------------------------

    def stmt_Pass(self, stmt: ast.Pass) -> None:
        pass

    def stmt_Expr(self, stmt: ast.Expr) -> None:
        if isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str):
            return  # a docstring
        if not isinstance(stmt.value, ast.Call):
            self.error(stmt, "an expression statement has no effect; assign it or remove it")
        self.expr(stmt.value)

    def stmt_Assign(self, stmt: ast.Assign) -> None:
        value = self.expr(stmt.value)
        for target in stmt.targets:
            self.assign(target, value, stmt)

    def stmt_AnnAssign(self, stmt: ast.AnnAssign) -> None:
        if stmt.value is None:
            self.error(stmt, "a declaration without a value is not supported")
        self.assign(stmt.target, self.expr(stmt.value), stmt)

    def stmt_AugAssign(self, stmt: ast.AugAssign) -> None:
        target = stmt.target
        if isinstance(target, ast.Name):
            current = self.scalar(ast.copy_location(ast.Name(target.id, ast.Load()), target))
            self.bind(target.id, self.binary(stmt.op, current, self.scalar(stmt.value), stmt), stmt)
            return
        if isinstance(target, ast.Subscript):
            array = self.expr(target.value)
            if not isinstance(array, Array):
                self.error(target, "only array elements can be updated in place")
            current = self.load_or_view(array, target)
            if not isinstance(current, Scalar):
                self.error(target, "in-place update of a slice is not supported; update elements in a loop")
            self.store(array, target, self.binary(stmt.op, current, self.scalar(stmt.value), stmt))
            return
        self.error(stmt, "unsupported target of an augmented assignment")

    def assign(self, target: ast.expr, value: object, stmt: ast.stmt) -> None:
        if isinstance(target, ast.Name):
            self.bind(target.id, value, stmt)
        elif isinstance(target, ast.Subscript):
            array = self.expr(target.value)
            if not isinstance(array, Array):
                self.error(target, "only array elements can be assigned with [...]")
            if not isinstance(value, Scalar):
                self.error(stmt, "only a number can be stored into an array element")
            self.store(array, target, value)
        elif isinstance(target, (ast.Tuple, ast.List)):
            if not isinstance(value, TupleValue) or len(value.items) != len(target.elts):
                self.error(stmt, "tuple unpacking needs a tuple of the same length on the right")
            for t, v in zip(target.elts, value.items):
                self.assign(t, v, stmt)
        else:
            self.error(stmt, f"cannot assign to {type(target).__name__}")

    def bind(self, name: str, value: object, stmt: ast.AST) -> None:
        old = self.env.get(name)
        if isinstance(old, Array) and name in self.loop_protected:
            self.error(stmt, f"array variable '{name}' is rebound inside a loop or branch; "
                             "use a new name for the new array")
        if isinstance(value, Scalar) and isinstance(value.value, SSAValue) and not value.value.name_hint:
            value.value.name_hint = name if name.isidentifier() else None
        self.env[name] = value

    # -- for -----------------------------------------------------------------------

    def stmt_For(self, stmt: ast.For) -> None:
        if stmt.orelse:
            self.error(stmt, "for ... else is not supported")
        call = stmt.iter
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "range"
                and self.env.get("range") is None):
            self.error(stmt.iter, "only `for i in range(...)` loops are supported; index arrays with range(len(x))")
        if not isinstance(stmt.target, ast.Name):
            self.error(stmt.target, "the loop variable must be a single name")
        args = [self.to_index(self.scalar(a), a) for a in call.args]
        if not 1 <= len(args) <= 3 or call.keywords:
            self.error(call, "range() takes 1 to 3 integer arguments")
        start, stop, step = (
            (self.const_index(0), args[0], self.const_index(1)) if len(args) == 1
            else (args[0], args[1], args[2] if len(args) == 3 else self.const_index(1))
        )
        step_const = self.constant_index_of(call.args[2]) if len(args) == 3 else 1
        if step_const == 0:
            self.error(call, "range() step must not be zero")
        start_bound = 0 if len(args) == 1 else self.lower_bound(start, call.args[0])

        def body(block: Block) -> None:
            iv = block.args[0]
            if step_const is not None and step_const > 0:
                i = iv
                if start_bound is not None:
                    self.lower_bounds[iv] = start_bound
            else:
                i = self.emit(arith.AddiOp(start, self.emit(arith.MuliOp(iv, step)).results[0])).results[0]
            i.name_hint = stmt.target.id
            self.env[stmt.target.id] = Scalar(i)
            self.statements(stmt.body)

        if step_const is not None and step_const > 0:
            self.loop(stmt, lambda inits, blk: scf.ForOp(start, stop, step, inits, blk), body)
        else:
            trips = self.trip_count(start, stop, step, step_const)
            self.loop(stmt, lambda inits, blk: scf.ForOp(self.const_index(0), trips, self.const_index(1), inits, blk), body)
        self.env.pop(stmt.target.id, None)

    def trip_count(self, start: SSAValue, stop: SSAValue, step: SSAValue, step_const: int | None) -> SSAValue:
        """Iterations of range(start, stop, step) for any nonzero step."""

        def count(lo: SSAValue, hi: SSAValue, st: SSAValue) -> SSAValue:
            span = self.emit(arith.SubiOp(hi, lo)).results[0]
            span = self.emit(arith.MaxSIOp(span, self.const_index(0))).results[0]
            return self.emit(arith.CeilDivSIOp(span, st)).results[0]

        neg_step = self.emit(arith.SubiOp(self.const_index(0), step)).results[0]
        down = count(stop, start, neg_step)
        if step_const is not None:
            return down
        up = count(start, stop, step)
        positive = self.emit(arith.CmpiOp(step, self.const_index(0), "sgt")).results[0]
        return self.emit(arith.SelectOp(positive, up, down)).results[0]

    def lower_bound(self, value: SSAValue, node: ast.expr) -> int | None:
        c = self.constant_index_of(node)
        return c if c is not None else self.lower_bounds.get(value)

    def carried_names(self, stmt: ast.stmt, bodies: list[list[ast.stmt]]) -> list[str]:
        names = []
        for name in assigned_names([s for b in bodies for s in b]):
            value = self.env.get(name)
            if isinstance(value, Array):
                self.loop_protected.add(name)
            elif isinstance(value, Scalar):
                names.append(name)
        return names

    def loop(self, stmt: ast.stmt, make_loop, body) -> None:  # type: ignore[no-untyped-def]
        """An scf.for carrying the variables the body assigns."""
        carried = self.carried_names(stmt, [stmt.body])
        types = {n: self.env[n].type for n in carried}
        while True:
            saved_env, saved_protected = dict(self.env), set(self.loop_protected)
            block = Block(arg_types=[IndexType(), *(types[n] for n in carried)])
            for n, arg in zip(carried, block.args[1:]):
                arg.name_hint = n
                self.env[n] = Scalar(arg)
            try:
                with self.inserting_at_end(block):
                    with self.allocation_scope():
                        body(block)
                        yields = self.carried_values(carried, types, stmt)
                    self.emit(scf.YieldOp(*yields))
            except _CarriedTypeChanged as change:
                self.env, self.loop_protected = saved_env, saved_protected
                types[change.name] = change.new_type
                continue
            self.env, self.loop_protected = saved_env, saved_protected
            break
        inits = [self.convert_to(self.env[n], types[n], stmt) for n in carried]
        op = self.emit(make_loop(inits, block))
        for n, r in zip(carried, op.results):
            r.name_hint = n
            self.env[n] = Scalar(r)

    def carried_values(self, carried: list[str], types: dict, stmt: ast.stmt) -> list[SSAValue]:
        values = []
        for n in carried:
            v = self.env.get(n)
            if not isinstance(v, Scalar):
                self.error(stmt, f"variable '{n}' changes from a number to something else in the loop")
            if v.type != types[n]:
                if isinstance(types[n], IndexType) and v.is_float:
                    raise _CarriedTypeChanged(n, v.type if isinstance(v.type, Float64Type) else f64)
                if v.is_bool and not isinstance(types[n], IndexType) and types[n] != v.type and not _is_float(types[n]):
                    raise _CarriedTypeChanged(n, IndexType())
                if _is_float(types[n]) and _is_float(v.type) and v.type != types[n] and not isinstance(types[n], Float64Type):
                    raise _CarriedTypeChanged(n, f64)
            values.append(self.convert_to(v, types[n], stmt))
        return values

    # -- while -----------------------------------------------------------------------

    def stmt_While(self, stmt: ast.While) -> None:
        if stmt.orelse:
            self.error(stmt, "while ... else is not supported")
        carried = self.carried_names(stmt, [stmt.body])
        types = {n: self.env[n].type for n in carried}
        while True:
            saved_env, saved_protected = dict(self.env), set(self.loop_protected)
            arg_types = [types[n] for n in carried]
            before, after = Block(arg_types=arg_types), Block(arg_types=arg_types)
            try:
                for n, arg in zip(carried, before.args):
                    arg.name_hint = n
                    self.env[n] = Scalar(arg)
                with self.inserting_at_end(before):
                    cond = self.to_bool(self.scalar(stmt.test))
                    self.emit(scf.ConditionOp(cond, *before.args))
                for n, arg in zip(carried, after.args):
                    arg.name_hint = n
                    self.env[n] = Scalar(arg)
                with self.inserting_at_end(after):
                    with self.allocation_scope():
                        self.statements(stmt.body)
                        yields = self.carried_values(carried, types, stmt)
                    self.emit(scf.YieldOp(*yields))
            except _CarriedTypeChanged as change:
                self.env, self.loop_protected = saved_env, saved_protected
                types[change.name] = change.new_type
                continue
            self.env, self.loop_protected = saved_env, saved_protected
            break
        inits = [self.convert_to(self.env[n], types[n], stmt) for n in carried]
        op = self.emit(scf.WhileOp(inits, arg_types, [before], [after]))
        for n, r in zip(carried, op.results):
            r.name_hint = n
            self.env[n] = Scalar(r)

    # -- if --------------------------------------------------------------------------

    def stmt_If(self, stmt: ast.If) -> None:
        cond = self.to_bool(self.scalar(stmt.test))
        before = dict(self.env)
        protected = set(self.loop_protected)
        for name in assigned_names(stmt.body + stmt.orelse):
            if isinstance(before.get(name), Array):
                self.loop_protected.add(name)
        blocks, envs = [], []
        for body in (stmt.body, stmt.orelse):
            block = Block()
            self.env = dict(before)
            with self.inserting_at_end(block), self.allocation_scope():
                self.statements(body)
            envs.append(self.env)
            blocks.append(block)
        self.env, self.loop_protected = before, protected
        names = [
            n for n in assigned_names(stmt.body + stmt.orelse)
            if all(isinstance(e.get(n), Scalar) for e in envs)
            and (isinstance(before.get(n), Scalar) or all(n in e for e in envs))
        ]
        types = [self.common_type(envs[0][n], envs[1][n], stmt) for n in names]
        for block, env in zip(blocks, envs):
            with self.inserting_at_end(block):
                self.emit(scf.YieldOp(*(self.convert_to(env[n], t, stmt) for n, t in zip(names, types))))
        op = self.emit(scf.IfOp(cond, types, [blocks[0]], [blocks[1]]))
        for n, r in zip(names, op.results):
            r.name_hint = n
            self.env[n] = Scalar(r)

    # -- unsupported -----------------------------------------------------------------

    def stmt_Break(self, stmt: ast.Break) -> None:
        self.error(stmt, "break is not supported; use a while loop whose condition stops it")

    def stmt_Continue(self, stmt: ast.Continue) -> None:
        self.error(stmt, "continue is not supported; put the rest of the loop body under an if")


def _is_float(t: Attribute) -> bool:
    from xdsl.dialects.builtin import Float16Type, Float32Type

    return isinstance(t, (Float64Type, Float32Type, Float16Type))


_HINTS = {
    "Try": "; errors cannot be caught in compiled code",
    "With": "",
    "FunctionDef": "; define the function at module level and call it",
    "Lambda": "; define a function at module level and call it",
    "Global": "; pass the value as an argument",
    "Nonlocal": "; pass the value as an argument",
    "Raise": "; check the condition before calling",
    "Delete": "",
    "Import": "; import at module level",
    "ImportFrom": "; import at module level",
    "Assert": "; check the condition before calling",
}
