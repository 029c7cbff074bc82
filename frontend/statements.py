"""Statements: assignments, if, break/continue and statement lists, as
structured IR (loops are in loops.py, returns in returns.py).

Python locals become SSA values. An if yields every scalar variable
assigned in a branch that exists before it (or is assigned in both
branches); one that may be unbound after it (assigned in one branch) is
yielded with its defined-flag when it is read later (control.Liveness),
and reading it while unbound raises UnboundLocalError at run time. An
array variable an if rebinds to arrays existing before it is their
arith.select after it.
After a statement that may `break` or `continue`, the rest of the loop body
is compiled under `if not <flag>:`.
"""

from __future__ import annotations

import ast

from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IndexType, i1
from xdsl.ir import Attribute, Block, SSAValue

from adpasses.dialects.ad import RaiseIfOp

from adpasses.frontend.array_vars import common_memref_type, selector_key
from adpasses.frontend.control import (BREAK, CONTINUE, assigned_names, exit_statements, is_flag,
                                       is_loop_return_value, loop_exits, maybe_unbound)
from adpasses.frontend.loops import value_name
from adpasses.frontend.values import Array, Scalar, Shape, TupleValue


class StatementMixin:
    # -- statement lists ---------------------------------------------------------

    def statements(self, stmts: list[ast.stmt]) -> None:
        """Statements that must not return (a loop body, a branch)."""
        for k, stmt in enumerate(stmts):
            if isinstance(stmt, ast.Return):
                # lift_loop_returns removed those in loop bodies; this is in a loop's else:
                self.error(stmt, "return in the else clause of a loop is not supported; assign to "
                                 "a variable and return it after the loop")
            self.statement(stmt)
            if isinstance(stmt, (ast.Break, ast.Continue, ast.Raise)):
                return  # the rest of the block is never run
            flags = loop_exits([stmt])
            rest = stmts[k + 1 :]
            if rest and flags:
                with self.at(rest[0]):
                    exiting = self.env[flags[0]].value
                    for flag in flags[1:]:
                        exiting = self.emit(arith.OrIOp(exiting, self.env[flag].value)).results[0]
                    self.conditional(self.negation(exiting), rest, [], rest[0])
                return

    def statement(self, stmt: ast.stmt) -> None:
        method = getattr(self, f"stmt_{type(stmt).__name__}", None)
        if method is None:
            kind = type(stmt).__name__
            self.error(stmt, f"{_NAMES.get(kind, kind.lower())} statements are not supported in compiled "
                             "functions" + _HINTS.get(kind, ""))
        with self.at(stmt):
            method(stmt)

    # -- simple statements -----------------------------------------------------------

    def stmt_Pass(self, stmt: ast.Pass) -> None:
        pass

    def stmt_Expr(self, stmt: ast.Expr) -> None:
        if isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str):
            return  # a docstring
        if isinstance(stmt.value, (ast.Yield, ast.YieldFrom, ast.Await)):
            self.expr(stmt.value)  # its own error: the construct and what to write instead
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
        if isinstance(target, ast.Name) and isinstance(self.env.get(target.id), Array):
            # x += y on an array writes x (frontend/array_exprs.py)
            self.update_in_place(self.env[target.id], stmt.op, self.expr(stmt.value), stmt)
            return
        if isinstance(target, ast.Name):
            current = self.scalar(ast.copy_location(ast.Name(target.id, ast.Load()), target))
            self.bind(target.id, self.binary(stmt.op, current, self.scalar(stmt.value), stmt), stmt)
            return
        if isinstance(target, ast.Subscript):
            array = self.expr(target.value)
            if not isinstance(array, Array):
                self.error(target, "only array elements can be updated in place")
            if not self.is_element_target(array, target):
                self.store_slice(array, target, self.expr(stmt.value), stmt.op, stmt)
                return
            current = self.load_or_view(array, target)
            self.store(array, target, self.binary(stmt.op, current, self.scalar(stmt.value), stmt))
            return
        self.error(target, f"cannot update {_describe(target)} in place; update a variable (s += v) or an "
                           "array element (x[i] += v)")

    def assign(self, target: ast.expr, value: object, stmt: ast.stmt) -> None:
        if isinstance(target, ast.Name):
            self.bind(target.id, value, stmt)
        elif isinstance(target, ast.Subscript):
            array = self.expr(target.value)
            if not isinstance(array, Array):
                self.error(target, "only array elements can be assigned with [...]")
            if not self.is_element_target(array, target):
                self.store_slice(array, target, value, None, stmt)
                return
            if not isinstance(value, Scalar):
                self.error(stmt, "only a number can be stored into an array element")
            self.store(array, target, value)
        elif isinstance(target, (ast.Tuple, ast.List)):
            if isinstance(value, Shape):  # n, m = M.shape
                value = TupleValue([Scalar(self.dim(value.array, k)) for k in range(value.array.ndim)])
            if not isinstance(value, TupleValue) or len(value.items) != len(target.elts):
                self.error(stmt, "tuple unpacking needs a tuple of the same length on the right")
            for t, v in zip(target.elts, value.items):
                self.assign(t, v, stmt)
        else:
            self.error(target, f"cannot assign to {_describe(target)}; assign to a variable (v = ...) or an "
                               "array element (x[i] = ...)")

    def bind(self, name: str, value: object, stmt: ast.AST) -> None:
        value = self.materialize(value, stmt)  # an array expression: computed into a local array
        if is_loop_return_value(name) and not isinstance(value, Scalar):
            self.loop_return_error(value, stmt)  # returns.py
        if selector_key(name) in self.env:  # an array variable this loop rebinds
            self.rebind_selected(name, value, stmt)
            return
        if isinstance(value, Scalar) and isinstance(value.value, SSAValue) and not value.value.name_hint:
            value.value.name_hint = value_name(name)
        self.env[name] = value
        self.env.pop(maybe_unbound(name), None)

    def check_bound(self, node: ast.Name) -> None:
        """Python's UnboundLocalError, at run time, when a variable that may
        be unbound here is read while it is; reads after it need no check."""
        flag = self.env.pop(maybe_unbound(node.id)).value
        if flag is self.const_bool(True):
            return
        with self.at(node):
            self.emit(RaiseIfOp(self.negation(flag), "UnboundLocalError",
                                f"cannot access local variable '{node.id}' where it is not associated "
                                "with a value"))

    # -- if --------------------------------------------------------------------------

    def stmt_If(self, stmt: ast.If) -> None:
        static = self.static_truth(stmt.test)  # `if radius is None:` (calls.py)
        if static is not None:  # the branch not taken is not compiled
            self.statements(stmt.body if static else stmt.orelse)
            return
        self.conditional(self.to_bool(self.scalar(stmt.test)), stmt.body, stmt.orelse, stmt)

    def conditional(self, cond: SSAValue, body: list[ast.stmt], orelse: list[ast.stmt], node: ast.AST) -> None:
        """`if cond: body else: orelse` as an scf.if yielding the variables
        the branches assign."""
        before = dict(self.env)
        assigned = assigned_names(body + orelse)
        selected = [n for n in assigned if selector_key(n) in before]  # rebound array variables of a loop
        blocks, envs = [], []
        for branch in (body, orelse):
            block = Block()
            self.env = dict(before)
            with self.inserting_at_end(block), self.allocation_scope():
                self.statements(branch)
            envs.append(self.env)
            blocks.append(block)
        self.env = before
        self.merge_raising_branches([body, orelse], envs, blocks, before)  # effects.py
        live = self.live_after_branches(body, orelse, node)
        names, flagged = [], []
        for n in [*assigned, *map(selector_key, selected)]:
            values = [e.get(n) for e in envs]
            if not all(v is None or isinstance(v, Scalar) for v in values) or all(v is None for v in values):
                continue
            maybe = any(v is None or maybe_unbound(n) in e for v, e in zip(values, envs))
            if maybe and not is_flag(n) and n not in (BREAK, CONTINUE) and (live is None or n in live):
                names.append(n)  # may be unbound after the if: yield it with its defined-flag
                flagged.append(n)
            elif not maybe:
                names.append(n)
        types = []
        for n in names:
            present = [e[n] for e in envs if n in e]
            types.append(self.common_type(present[0], present[-1], node))
        with self.at(node):
            for block, env in zip(blocks, envs):
                with self.inserting_at_end(block):
                    yields = [self.convert_to(env[n], t, node) if n in env else self.zero_of(t)
                              for n, t in zip(names, types)]
                    yields += [self.defined_flag(env, n) for n in flagged]
                    self.emit(scf.YieldOp(*yields))
            op = self.emit(scf.IfOp(cond, [*types, *[i1] * len(flagged)], [blocks[0]], [blocks[1]]))
        for n, r in zip(names, op.results):
            r.name_hint = value_name(n)
            # a numpy scalar (an np.int32) after the if when every branch that defines it makes one
            present = [e[n] for e in envs if n in e]
            int32 = all(v.int32 for v in present) and isinstance(r.type, IndexType)
            self.env[n] = Scalar(r, numpy=all(v.numpy for v in present), int32=int32)
            self.env.pop(maybe_unbound(n), None)
        for n, r in zip(flagged, op.results[len(names):]):
            self.env[maybe_unbound(n)] = Scalar(r)
        for n in selected:
            with self.at(node):
                self.select_array(n)
        self.merge_arrays(cond, [n for n in assigned if n not in selected], envs, before, live, node)

    def live_after_branches(self, body: list[ast.stmt], orelse: list[ast.stmt], node: ast.AST) -> set[str] | None:
        """Names that may be read after an if, on any path out of it: where
        each branch's last statement leads, where each `break`/`continue` in
        it leads (past the loop's `else:` for a `break`: a variable assigned
        before the break is read after the loop) and, for an `if`
        statement, what follows it (None: unknown, assume everything)."""
        live: set[str] = set()
        ends = [branch[-1] for branch in (body, orelse) if branch] + exit_statements(body + orelse)
        if isinstance(node, ast.If):
            ends.append(node)
        for end in ends:
            after = self.liveness.live_after(end)
            if after is None:
                return None
            live |= after
        return live

    def merge_arrays(self, cond: SSAValue, names: list[str], envs: list[dict], before: dict,
                     live: set[str] | None, node: ast.AST) -> None:
        """Array variables an if rebinds: after it, `arith.select` of the
        branches' arrays, which must exist before the if (an array made in
        a branch is freed at its end)."""
        existing = [v.value for v in before.values() if isinstance(v, Array)]
        for n in names:
            values = [e.get(n) for e in envs]
            if not any(isinstance(v, Array) for v in values):
                continue
            if all(isinstance(v, Array) and v.value in existing for v in values):
                a, b = values
                if a.value is b.value:
                    self.env[n] = a
                    continue
                with self.at(node):
                    common = common_memref_type([a.value, b.value])
                    if common is None:
                        self.error(node, f"array variable '{n}' is bound to arrays of different dtypes or "
                                         "numbers of dimensions in the branches of this if; use one dtype "
                                         "and shape")
                    chosen = self.emit(arith.SelectOp(cond, self.as_memref_type(a.value, common),
                                                      self.as_memref_type(b.value, common))).results[0]
                self.env[n] = Array(chosen)
            elif live is None or n in live:
                self.error(node, f"array variable '{n}' is bound in a branch of this if to an array made in "
                                 "that branch (or in one branch only) and used after the if; allocate the "
                                 "array before the if and fill it in the branches (u[:] = ...)")
            else:
                self.env.pop(n, None)

    def defined_flag(self, env: dict, name: str) -> SSAValue:
        """Whether `name` is bound in `env`, as an i1."""
        if name not in env:
            return self.const_bool(False)
        flag = env.get(maybe_unbound(name))
        return flag.value if flag is not None else self.const_bool(True)

    def zero_of(self, t: Attribute) -> SSAValue:
        """The value an unbound variable holds beside its false defined-flag."""
        if isinstance(t, IndexType):
            return self.const_index(0)
        if t == i1:
            return self.const_bool(False)
        return self.const_float(0.0, t)

    # -- break / continue ------------------------------------------------------------

    def stmt_Break(self, stmt: ast.Break) -> None:
        self.env[BREAK] = Scalar(self.const_bool(True))

    def stmt_Continue(self, stmt: ast.Continue) -> None:
        self.env[CONTINUE] = Scalar(self.const_bool(True))

    def negation(self, flag: SSAValue) -> SSAValue:
        return self.emit(arith.XOrIOp(flag, self.const_bool(True))).results[0]


# How the constructs are written (the AST's class names are not).
_NAMES = {
    "FunctionDef": "nested def",
    "AsyncFunctionDef": "async def",
    "ClassDef": "class",
    "AsyncFor": "async for",
    "AsyncWith": "async with",
    "ImportFrom": "from ... import",
    "TryStar": "try/except*",
}

_HINTS = {
    "Try": "; errors cannot be caught in compiled code",
    "With": "; set up what it manages outside the compiled function",
    "FunctionDef": "; define the function at module level and call it",
    "Lambda": "; define a function at module level and call it",
    "Global": "; pass the value as an argument",
    "Nonlocal": "; pass the value as an argument",
    "Delete": "; remove it (a variable simply stops being used)",
    "ClassDef": "; define classes outside and pass numbers and arrays",
    "Match": "; use if/elif/else",
    "AsyncFunctionDef": "; define the function at module level and call it",
    "AsyncFor": "; use a for loop over range(...)",
    "AsyncWith": "; set up what it manages outside the compiled function",
    "TryStar": "; errors cannot be caught in compiled code",
    "Import": "; import at module level",
    "ImportFrom": "; import at module level",
}


def _describe(node: ast.AST) -> str:
    try:
        return f"'{ast.unparse(node)}'"
    except Exception:  # noqa: BLE001
        return type(node).__name__
