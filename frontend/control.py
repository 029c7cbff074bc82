"""Questions asked about Python statements before compiling them: which
names they assign (the variables an scf.for/scf.if/scf.while must carry),
whether they can leave the enclosing loop (`break`/`continue`) and whether
they return.

A loop's `break` and `continue` are compiled as boolean flags held in the
compiler's environment under the names below; they are not identifiers, so
they never clash with the user's variables, and an `if` that sets one
yields it like any other assigned variable.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

BREAK = "!break"
CONTINUE = "!continue"
LOOP_EXITS = {ast.Break: BREAK, ast.Continue: CONTINUE}


def maybe_unbound(name: str) -> str:
    """The environment key of the defined-flag (an i1) of a variable that
    may be unbound at run time (assigned in one branch, or only inside a
    loop); absent while the variable is certainly bound."""
    return "?" + name


def is_flag(name: str) -> bool:
    return name.startswith("?")


def _nodes(stmts: list[ast.stmt], *, into_loops: bool) -> Iterator[ast.AST]:
    """Every node under `stmts`; the bodies of nested loops only if
    `into_loops` (a break there belongs to that loop)."""
    stack: list[ast.AST] = list(reversed(stmts))
    while stack:
        node = stack.pop()
        yield node
        if not into_loops and isinstance(node, (ast.For, ast.While)):
            continue
        stack.extend(reversed(list(ast.iter_child_nodes(node))))


def assigned_names(stmts: list[ast.stmt]) -> list[str]:
    """Names bound anywhere in `stmts`, in order, once each; a `break` or
    `continue` of the loop these statements belong to counts as assigning
    that loop's flag."""
    names: dict[str, None] = {}

    def bind(target: ast.expr) -> None:
        if isinstance(target, ast.Name):
            names[target.id] = None
        elif isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                bind(element)

    for node in _nodes(stmts, into_loops=True):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                bind(target)
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.For)):
            bind(node.target)
    for flag in loop_exits(stmts):
        names[flag] = None
    return list(names)


def loop_exits(stmts: list[ast.stmt]) -> list[str]:
    """The flags (BREAK, CONTINUE) that `stmts` may set for their loop."""
    found = {LOOP_EXITS[type(n)] for n in _nodes(stmts, into_loops=False) if type(n) in LOOP_EXITS}
    return [flag for flag in (BREAK, CONTINUE) if flag in found]


def exit_statements(stmts: list[ast.stmt]) -> list[ast.stmt]:
    """The `break`/`continue` statements in `stmts` that leave their loop
    (not those of nested loops)."""
    return [n for n in _nodes(stmts, into_loops=False) if type(n) in LOOP_EXITS]


def contains_return(stmts: list[ast.stmt]) -> bool:
    return any(isinstance(n, ast.Return) for n in _nodes(stmts, into_loops=True))


def always_returns(stmts: list[ast.stmt]) -> bool:
    """Every path through `stmts` ends in a return."""
    if not stmts:
        return False
    last = stmts[-1]
    if isinstance(last, ast.Return):
        return True
    return isinstance(last, ast.If) and always_returns(last.body) and always_returns(last.orelse)


# -- returns inside loops ---------------------------------------------------------
# `return v` inside a loop becomes `!value = v; !returned = True; break`
# (enclosing loops break too when `!returned` is set), and the loop is
# followed by `if !returned: return !value`, which ReturnMixin structures
# as an scf.if like any other early return. When every such return returns
# a tuple display of the same length (`return value, index`), each item gets
# a variable of its own (`!value0`, `!value1`, ...: tuples are not carried).

RETURNED = "!returned"
RETURN_VALUE = "!value"


def lift_loop_returns(stmts: list[ast.stmt]) -> list[ast.stmt]:
    """Rewrite function-level statements so that no return is inside a loop."""
    out: list[ast.stmt] = []
    for stmt in stmts:
        if isinstance(stmt, (ast.For, ast.While)) and contains_return(stmt.body):
            values = [n.value for n in _nodes(stmt.body, into_loops=True) if isinstance(n, ast.Return)
                      and n.value is not None]
            names = _value_names(values)
            out.append(_at(ast.Assign([_name(RETURNED, store=True)], ast.Constant(False)), stmt))
            for name in names:
                out.append(_at(ast.Assign([_name(name, store=True)], ast.Constant(False)), stmt))
            out.append(_with_body(stmt, _returns_in_loop(stmt.body, names)))
            result = None
            if len(names) == 1:
                result = _name(names[0])
            elif names:
                result = ast.Tuple([_name(n) for n in names], ast.Load())
            out.append(_at(ast.If(_name(RETURNED), [_at(ast.Return(result), stmt)], []), stmt))
        elif isinstance(stmt, ast.If):
            out.append(_at(ast.If(stmt.test, lift_loop_returns(stmt.body), lift_loop_returns(stmt.orelse)), stmt))
        else:
            out.append(stmt)
    return out


def _value_names(values: list[ast.expr]) -> list[str]:
    """The variables holding what the returns of a loop return."""
    if not values:
        return []
    lengths = {len(v.elts) if isinstance(v, ast.Tuple) else None for v in values}
    if len(lengths) == 1 and (n := lengths.pop()) is not None and n > 1:
        return [f"{RETURN_VALUE}{k}" for k in range(n)]
    return [RETURN_VALUE]


def _returns_in_loop(stmts: list[ast.stmt], names: list[str]) -> list[ast.stmt]:
    out: list[ast.stmt] = []
    for stmt in stmts:
        if isinstance(stmt, ast.Return):
            if stmt.value is not None and len(names) > 1:
                assert isinstance(stmt.value, ast.Tuple)
                for name, item in zip(names, stmt.value.elts):
                    out.append(_at(ast.Assign([_name(name, store=True)], item), stmt))
            elif stmt.value is not None:
                out.append(_at(ast.Assign([_name(names[0], store=True)], stmt.value), stmt))
            out.append(_at(ast.Assign([_name(RETURNED, store=True)], ast.Constant(True)), stmt))
            out.append(_at(ast.Break(), stmt))
        elif isinstance(stmt, ast.If) and contains_return([stmt]):
            out.append(_at(ast.If(stmt.test, _returns_in_loop(stmt.body, names),
                                  _returns_in_loop(stmt.orelse, names)), stmt))
        elif isinstance(stmt, (ast.For, ast.While)) and contains_return(stmt.body):
            out.append(_with_body(stmt, _returns_in_loop(stmt.body, names)))
            out.append(_at(ast.If(_name(RETURNED), [_at(ast.Break(), stmt)], []), stmt))
        else:
            out.append(stmt)
    return out


def is_loop_return_value(name: str) -> bool:
    """A variable the rewrite of returns inside loops assigns."""
    return name.startswith(RETURN_VALUE)


def _with_body(loop: ast.For | ast.While, body: list[ast.stmt]) -> ast.stmt:
    if isinstance(loop, ast.For):
        return _at(ast.For(loop.target, loop.iter, body, loop.orelse), loop)
    return _at(ast.While(loop.test, body, loop.orelse), loop)


def _name(name: str, store: bool = False) -> ast.Name:
    return ast.Name(name, ast.Store() if store else ast.Load())


def _at(node: ast.AST, where: ast.AST) -> ast.AST:
    """`node` (and its new children) at the source position of `where`."""
    for n in ast.walk(node):
        if "lineno" in n._attributes and not hasattr(n, "lineno"):
            ast.copy_location(n, where)
    return node


# -- liveness ----------------------------------------------------------------------
# Which variables may still be read after each statement (before being
# assigned again): an `if` yields, and a loop carries out, a variable first
# assigned inside it only when it is live after it, and a loop carries a
# variable first assigned in its body when an iteration may read the value
# of the one before (live at the body's entry). Over-approximations are
# safe (a variable carried for nothing, with its defined-flag).


class Liveness:
    """`after[id(stmt)]`: names live after `stmt`; `entry[id(loop)]`: names
    live at the start of a loop's body (after a for loop binds its
    targets)."""

    def __init__(self, stmts: list[ast.stmt]):
        self.after: dict[int, set[str]] = {}
        self.entry: dict[int, set[str]] = {}
        self._block(stmts, set(), None)

    def live_after(self, stmt: ast.stmt) -> set[str] | None:
        return self.after.get(id(stmt))

    def _block(self, stmts: list[ast.stmt], live_out: set[str],
               loop: tuple[set[str], set[str]] | None) -> set[str]:
        live = set(live_out)
        for stmt in reversed(stmts):
            self.after.setdefault(id(stmt), set()).update(self._continuation(stmt, live, loop))
            live = self._stmt(stmt, live, loop)
        return live

    @staticmethod
    def _continuation(stmt: ast.stmt, live: set[str], loop: tuple[set[str], set[str]] | None) -> set[str]:
        """What is live where control goes after `stmt`: after a `break`,
        what is live after its loop (the loop's `else:` is skipped), after a
        `continue`, at the loop's head; after a `return`, nothing."""
        if isinstance(stmt, ast.Break) and loop is not None:
            return loop[0]
        if isinstance(stmt, ast.Continue) and loop is not None:
            return loop[1]
        if isinstance(stmt, ast.Return):
            return set()
        return live

    def _stmt(self, stmt: ast.stmt, live: set[str], loop: tuple[set[str], set[str]] | None) -> set[str]:
        if isinstance(stmt, ast.Break):
            return live | (loop[0] if loop else set())
        if isinstance(stmt, ast.Continue):
            return live | (loop[1] if loop else set())
        if isinstance(stmt, ast.Return):
            return _loads(stmt.value)
        if isinstance(stmt, ast.If):
            return _loads(stmt.test) | self._block(stmt.body, live, loop) | self._block(stmt.orelse, live, loop)
        if isinstance(stmt, (ast.For, ast.While)):
            out = live
            else_live = self._block(stmt.orelse, out, loop)
            targets = set(_bound_names(stmt.target)) if isinstance(stmt, ast.For) else set()
            test = _loads(stmt.test) if isinstance(stmt, ast.While) else set()
            head: set[str] = set(else_live) | test
            while True:
                body_live = self._block(stmt.body, head, (out, head))
                new_head = (body_live - targets) | else_live | test
                if new_head <= head:
                    break
                head |= new_head
            self.entry.setdefault(id(stmt), set()).update(body_live)
            return head | (_loads(stmt.iter) if isinstance(stmt, ast.For) else set())
        if isinstance(stmt, ast.Assign):
            killed = {n for t in stmt.targets for n in _bound_names(t)}
            return (live - killed) | _loads(stmt)
        if isinstance(stmt, ast.AnnAssign):
            return (live - set(_bound_names(stmt.target))) | _loads(stmt.value)
        if isinstance(stmt, ast.AugAssign):
            reads = {stmt.target.id} if isinstance(stmt.target, ast.Name) else set()
            return live | reads | _loads(stmt)
        return live | _loads(stmt)


def _bound_names(target: ast.expr) -> list[str]:
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [n for e in target.elts for n in _bound_names(e)]
    return []


def _loads(node: ast.AST | None) -> set[str]:
    if node is None:
        return set()
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
