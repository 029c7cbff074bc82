"""Loops of the shapes `ad-parallelize` proves (or must refuse), put in
front of the parallel mode's programs (tools/fuzz/parallel.py): the
random programs rarely build them on their own.

For a seed, one pattern over one of the program's arrays `X` (a row
index `i` over its first axis), its sum `acc` added to the first result:

- `conditional`: `if X[i, 0] > c: acc += e else: acc -= e'` (or no else);
- `inner`: `for j: acc += e(X[i, j])` (a sum through a serial inner loop);
- `private`: `t = 0; for j: t += e(X[i, j]); acc += t * t`;
- `rows`: `for j: Y[i, j] = e(X[i, j], X[i, 0])` into another array `Y`
  with rows of X's length, or in place (`Y` is `X`), then `acc += Y[i, 0]`;
- `next_row`: `for j: X[i, j] = X[i - 1, j] * 0.5 + e` (iteration i reads
  what i - 1 wrote: must stay serial).

Gathers (indices loaded from an integer array) are outside the programs'
model (tests cover them: test/test_parallel.py).
"""

from __future__ import annotations

import random
from dataclasses import replace

from adpasses.tools.fuzz.program import (
    Assign,
    Const,
    Dim,
    FCmp,
    For,
    Idx,
    If,
    IndexToFloat,
    Let,
    Load,
    MemArg,
    Op,
    Program,
    Stmt,
    Store,
    Var,
)

PATTERNS = ("conditional", "inner", "private", "rows", "next_row")


def _row(x: MemArg, i: str, j: Idx | None) -> tuple[Idx, ...]:
    row = Idx(0, ((1, i),))
    if len(x.shape) == 1:
        return (row,)
    return (row, j if j is not None else Idx(0))


def _term(r: random.Random, value) -> Op:  # type: ignore[no-untyped-def]
    """A smooth function of `value`, contracting."""
    how = r.choice(["sin", "square", "scaled"])
    if how == "sin":
        return Op("sin", (value,))
    if how == "square":
        return Op("mulf", (value, Op("mulf", (value, Const(0.5)))))
    return Op("mulf", (value, Const(round(r.uniform(-1, 1), 2))))


def with_pattern(p: Program) -> tuple[Program, str | None]:
    """`p` with a pattern loop in front (and its name), or `p` (None)."""
    r = random.Random(f"parallel pattern {p.seed}")
    arrays = [a for a in p.args if isinstance(a, MemArg)]
    if not arrays or r.random() < 0.25:
        return p, None
    kind = r.choice(PATTERNS)
    x = r.choice(arrays)
    writable = [a for a in arrays if a.activity != "const"]
    i, j, acc, t = "pi0", "pj0", "pacc0", "pt0"
    n0 = Idx(0, ((1, Dim(x.name, 0)),))
    inner_n = Idx(0, ((1, Dim(x.name, 1)),)) if len(x.shape) == 2 else Idx(3)
    jx = Idx(0, ((1, j),)) if len(x.shape) == 2 else None

    def element(arr: MemArg, col: Idx | None = None) -> Load:
        return Load(arr.name, _row(arr, i, col))

    body: list[Stmt]
    if kind == "conditional":
        e = _term(r, element(x))
        orelse = (Assign(acc, Op("subf", (Var(acc), _term(r, element(x))))),) if r.random() < 0.5 else ()
        body = [If(FCmp(r.choice(["ogt", "olt"]), element(x), Const(round(r.uniform(-0.5, 0.5), 2))),
                   (Assign(acc, Op("addf", (Var(acc), e))),), orelse)]
    elif kind in ("inner", "private"):
        value = element(x, jx) if jx is not None else Op("mulf", (element(x), IndexToFloat(Idx(0, ((1, j),)))))
        target = acc if kind == "inner" else t
        loop = For(j, Idx(0), inner_n, 1, (Assign(target, Op("addf", (Var(target), _term(r, value)))),))
        body = [loop] if kind == "inner" else \
            [Let(t, Const(0.0)), loop, Assign(acc, Op("addf", (Var(acc), Op("mulf", (Var(t), Var(t))))))]
    elif kind == "rows":
        same = [y for y in writable if y.shape[0] == x.shape[0] and len(y.shape) == len(x.shape)
                and (len(y.shape) == 1 or y.shape[1] == x.shape[1])]
        if not same:
            return p, None
        y = r.choice(same)
        value = Op("addf", (_term(r, element(x, jx)), Op("mulf", (element(x), Const(0.25)))))
        store = Store(y.name, _row(y, i, jx), value)
        inner: list[Stmt] = [For(j, Idx(0), inner_n, 1, (store,))] if jx is not None else [store]
        body = [*inner, Assign(acc, Op("addf", (Var(acc), element(y))))]
    else:  # next_row
        if x.activity == "const" or x.shape[0] < 2:
            return p, None
        prev = Idx(-1, ((1, i),))
        cols = (prev, jx) if jx is not None else (prev,)
        value = Op("addf", (Op("mulf", (Load(x.name, cols), Const(0.5))), _term(r, element(x, jx))))
        store = Store(x.name, _row(x, i, jx), value)
        inner = [For(j, Idx(0), inner_n, 1, (store,))] if jx is not None else [store]
        loop = For(i, Idx(1), n0, 1, (*inner, Assign(acc, Op("addf", (Var(acc), element(x))))))
        return _attach(p, [Let(acc, Const(0.0)), loop], acc), kind
    loop = For(i, Idx(0), n0, 1, tuple(body))
    return _attach(p, [Let(acc, Const(0.0)), loop], acc), kind


def _attach(p: Program, stmts: list[Stmt], acc: str) -> Program:
    if p.results:
        results = (Op("addf", (p.results[0], Var(acc))), *p.results[1:])
        return replace(p, body=(*stmts, *p.body), results=results)
    return replace(p, body=(*stmts, *p.body), results=(Var(acc),), ret_activity=("active",))


__all__ = ["PATTERNS", "with_pattern"]
