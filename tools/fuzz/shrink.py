"""Shrink a failing program to a small one that fails the same way.

Greedy delta debugging on the program tree: try candidate edits in order
of how much they remove, keep the first that is valid (`program.validate`)
and still fails with the same signature, and start again from it, until no
edit helps. Edits:

1. compile options back to the defaults (`ad-run` then reproduces it);
2. delete a statement; replace a loop or branch by its body (the induction
   variable becomes the lower bound, a while counter 0); drop a result;
3. replace an expression by one of its operands or by a constant;
4. simplify arguments: drop unused ones, make them const, plain (identity
   layout, no noalias, dynamic sizes), smaller, not aliased.

The check is a parameter: in-process (`check.check_program`, what tests use
to shrink a failure planted in the rule table) or a worker process
(`runner.WorkerCheck`, which survives crashes).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterator
from dataclasses import replace

from adpasses.tools.fuzz.check import Outcome
from adpasses.tools.fuzz.program import (
    Alloc,
    Const,
    Copy,
    Dim,
    Expr,
    For,
    Idx,
    If,
    IndexArg,
    Invalid,
    Load,
    MemArg,
    FloatArg,
    Options,
    Program,
    Stmt,
    Store,
    Var,
    View,
    While,
    c_strides,
    child_blocks,
    program_size,
    sub_exprs,
    validate,
)

Check = Callable[[Program], Outcome]


def signature(o: Outcome) -> str:
    """What must stay the same while shrinking: the kind, and for compiler
    errors the exception and its message without names and numbers."""
    if o.kind != "compiler error":
        return o.kind
    text = re.sub(r"%[\w#]+|@\w+|\d+|'[^']*'", "_", o.detail.split(":", 1)[0] + ":" +
                  o.detail.split("error:", 1)[-1])
    return f"{o.kind}: {text[:120]}"


def shrink(p: Program, check: Check, *, max_checks: int = 2000,
           log: Callable[[str], None] | None = None) -> tuple[Program, Outcome]:
    """The smallest program found failing like `p`, and its outcome."""
    first = check(p)
    target = signature(first)
    best, best_outcome, checks = p, first, 0
    improved = True
    while improved and checks < max_checks:
        improved = False
        for candidate in candidates(best):
            if program_size(candidate) > program_size(best):
                continue
            try:
                validate(candidate)
            except Invalid:
                continue
            checks += 1
            outcome = check(candidate)
            if outcome.failed and signature(outcome) == target:
                best, best_outcome, improved = candidate, outcome, True
                if log:
                    log(f"shrunk to size {program_size(best)}")
                break
            if checks >= max_checks:
                break
    return best, best_outcome


def candidates(p: Program) -> Iterator[Program]:
    yield from _option_edits(p)
    yield from _statement_edits(p)
    yield from _result_edits(p)
    yield from _expression_edits(p)
    yield from _argument_edits(p)


# -- options ------------------------------------------------------------------------


def _option_edits(p: Program) -> Iterator[Program]:
    default = Options()
    for f in dataclasses.fields(Options):
        if getattr(p.options, f.name) != getattr(default, f.name):
            yield replace(p, options=replace(p.options, **{f.name: getattr(default, f.name)}))


# -- statements ----------------------------------------------------------------------

Path = tuple[tuple[int, int], ...]
"""Where a block is: (statement index, child block) from the function body."""


def blocks(body: tuple[Stmt, ...], path: Path = ()) -> Iterator[tuple[Path, tuple[Stmt, ...]]]:
    yield path, body
    for i, s in enumerate(body):
        for k, child in enumerate(child_blocks(s)):
            yield from blocks(child, (*path, (i, k)))


def with_block(body: tuple[Stmt, ...], path: Path, new: tuple[Stmt, ...]) -> tuple[Stmt, ...]:
    if not path:
        return new
    (i, k), rest = path[0], path[1:]
    s = body[i]
    children = child_blocks(s)
    changed = with_block(children[k], rest, new)
    if isinstance(s, If):
        s = replace(s, then=changed) if k == 0 else replace(s, orelse=changed)
    else:
        s = replace(s, body=changed)  # type: ignore[call-arg]
    return (*body[:i], s, *body[i + 1:])


def inlined(s: Stmt) -> list[tuple[Stmt, ...]]:
    """Bodies that can replace a structured statement."""
    if isinstance(s, For):
        return [tuple(_substitute(x, s.iv, s.lb) for x in s.body)]
    if isinstance(s, While):
        return [tuple(_substitute(x, s.counter, Idx(0)) for x in s.body)]
    if isinstance(s, If):
        return [s.then, s.orelse]
    return []


def _statement_edits(p: Program) -> Iterator[Program]:
    # Largest first: whole statements at the top, then deeper ones.
    for path, body in blocks(p.body):
        for i, s in enumerate(body):
            yield replace(p, body=with_block(p.body, path, (*body[:i], *body[i + 1:])))
        for i, s in enumerate(body):
            for inner in inlined(s):
                yield replace(p, body=with_block(p.body, path, (*body[:i], *inner, *body[i + 1:])))
            if isinstance(s, While) and (s.limit > 1 or s.cond is not None):
                yield replace(p, body=with_block(p.body, path, (
                    *body[:i], replace(s, limit=1, cond=None), *body[i + 1:])))
            if isinstance(s, For) and s.step > 1:
                yield replace(p, body=with_block(p.body, path, (
                    *body[:i], replace(s, step=1), *body[i + 1:])))


def _result_edits(p: Program) -> Iterator[Program]:
    for k in range(len(p.results)):
        yield replace(p, results=p.results[:k] + p.results[k + 1:],
                      ret_activity=p.ret_activity[:k] + p.ret_activity[k + 1:])


# -- expressions ---------------------------------------------------------------------


def _expression_edits(p: Program) -> Iterator[Program]:
    for k in range(_count_exprs(p)):
        for make in _SIMPLER_EXPRS:
            new = _replace_nth_expr(p, k, make)
            if new is not None:
                yield new


def _operand(j: int) -> Callable[[Expr], Expr | None]:
    def make(e: Expr) -> Expr | None:
        subs = sub_exprs(e)
        return subs[j] if j < len(subs) else None
    return make


def _const(v: float) -> Callable[[Expr], Expr | None]:
    def make(e: Expr) -> Expr | None:
        return None if isinstance(e, Const) else Const(v)
    return make


_SIMPLER_EXPRS = [_operand(0), _operand(1), _operand(2), _operand(3), _const(1.0), _const(0.5)]
"""An expression becomes one of its operands (a Select's condition operands
first), else a constant."""


def _count_exprs(node: object) -> int:
    n = 1 if isinstance(node, Expr) else 0
    for child in _children(node):
        n += _count_exprs(child)
    return n


def _children(node: object) -> list[object]:
    if isinstance(node, tuple):
        return list(node)
    if dataclasses.is_dataclass(node) and not isinstance(node, type | Idx | Dim | Options):
        return [getattr(node, f.name) for f in dataclasses.fields(node)]
    return []


def _replace_nth_expr(p: Program, n: int, make: Callable[[Expr], Expr | None]) -> Program | None:
    """`p` with its n-th expression node (preorder) replaced by `make(node)`;
    None if `make` declines."""
    counter = [n]
    declined = [False]

    def rebuild(node):  # type: ignore[no-untyped-def]
        if isinstance(node, Expr):
            if counter[0] == 0:
                counter[0] -= 1
                new = make(node)
                if new is None:
                    declined[0] = True
                    return node
                return new
            counter[0] -= 1
        if isinstance(node, tuple):
            return tuple(rebuild(x) for x in node)
        if dataclasses.is_dataclass(node) and not isinstance(node, type | Idx | Dim | Options):
            changes = {f.name: rebuild(getattr(node, f.name)) for f in dataclasses.fields(node)}
            return replace(node, **changes)
        return node

    body, results = rebuild(p.body), rebuild(p.results)
    if declined[0]:
        return None
    return replace(p, body=body, results=results)


def _substitute(node, name: str, value: Idx):  # type: ignore[no-untyped-def]
    """Replace the index symbol `name` by `value` everywhere in `node`."""
    if isinstance(node, Idx):
        return node.substitute(name, value)
    if isinstance(node, tuple):
        return tuple(_substitute(x, name, value) for x in node)
    if dataclasses.is_dataclass(node) and not isinstance(node, type | Dim | Options):
        return replace(node, **{f.name: _substitute(getattr(node, f.name), name, value)
                                for f in dataclasses.fields(node)})
    return node


# -- arguments -----------------------------------------------------------------------


def _used_names(p: Program) -> set[str]:
    """Names of arguments the body or the results refer to."""
    names: set[str] = set()

    def symbol(sym: object) -> None:
        names.add(sym.mem if isinstance(sym, Dim) else sym)  # type: ignore[arg-type]

    def visit(node: object) -> None:
        if isinstance(node, Var):
            names.add(node.name)
        elif isinstance(node, Load | Store):
            names.add(node.mem)
        elif isinstance(node, View):
            names.add(node.source)
        elif isinstance(node, Copy):
            names.update((node.src, node.dst))
        elif isinstance(node, Alloc) and node.dynamic is not None:
            symbol(node.dynamic)
        elif isinstance(node, Idx):
            for _, sym in node.terms:
                symbol(sym)
            return
        for child in _children(node):
            visit(child)

    visit(p.body)
    visit(p.results)
    return names


def _argument_edits(p: Program) -> Iterator[Program]:
    used = _used_names(p)
    for k, a in enumerate(p.args):
        if a.name not in used:
            yield _drop_unused_buffers(replace(p, args=p.args[:k] + p.args[k + 1:]))
    for k, a in enumerate(p.args):
        for new in _simpler_args(p, a):
            candidate = replace(p, args=(*p.args[:k], new, *p.args[k + 1:]))
            if isinstance(new, MemArg) and not new.strided:
                sizes = list(candidate.buffers)
                sizes[new.buffer] = new.shape[0] * (new.shape[1] if len(new.shape) == 2 else 1)
                candidate = replace(candidate, buffers=tuple(sizes))
            yield candidate
        if isinstance(a, MemArg) and any(
                isinstance(b, MemArg) and b.buffer == a.buffer for b in p.args[:k]):
            # Unalias: its own buffer, of the same extent.
            yield replace(p, args=(*p.args[:k], replace(a, buffer=len(p.buffers)), *p.args[k + 1:]),
                          buffers=(*p.buffers, p.buffers[a.buffer]))
    for k in range(len(p.ret_activity)):
        if p.ret_activity[k] == "active" and p.ret_activity.count("active") > 1:
            yield replace(p, ret_activity=(*p.ret_activity[:k], "const", *p.ret_activity[k + 1:]))


def _simpler_args(p: Program, a: object) -> Iterator[object]:
    if isinstance(a, FloatArg) and a.activity == "active":
        yield replace(a, activity="const")
    if isinstance(a, IndexArg):
        return
    if not isinstance(a, MemArg):
        return
    if a.activity != "const":
        yield replace(a, activity="const")
    if a.activity == "dupnoneed":
        yield replace(a, activity="dup")
    if a.noalias:
        yield replace(a, noalias=False)
    if a.static_shape:
        yield replace(a, static_shape=False)
    if a.strided:
        yield replace(a, strided=False, offset=0, strides=c_strides(a.shape))
    for d in range(len(a.shape)):
        if a.shape[d] > 1:
            shape = (*a.shape[:d], a.shape[d] - 1, *a.shape[d + 1:])
            yield replace(a, shape=shape, strides=a.strides if a.strided else c_strides(shape))


def _drop_unused_buffers(p: Program) -> Program:
    used = sorted({a.buffer for a in p.args if isinstance(a, MemArg)})
    renumber = {old: new for new, old in enumerate(used)}
    args = tuple(replace(a, buffer=renumber[a.buffer]) if isinstance(a, MemArg) else a
                 for a in p.args)
    return replace(p, args=args, buffers=tuple(p.buffers[b] for b in used))

