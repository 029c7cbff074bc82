"""Integer index expressions as affine forms, and a test for "can it be 0?".

An index is written as `c0 + sum(c_k * s_k)` where each symbol `s_k` is an
SSA value (an opaque integer), a `ViewIndex` placeholder (the k-th index of
an access through a view, substituted before comparing) or a `Fresh`
unknown (a value at another time, or an element of a range). `affine_form`
understands integer constants, `arith.addi`, `arith.subi`, `arith.muli` by a
constant, `arith.index_cast`, and the offset and strides that
`memref.extract_strided_metadata` reads from a memref whose type fixes them
(the identity layout: offset 0, row-major strides; a static strided
layout); any other value is an opaque symbol.

Arithmetic is expanded only on `index` and integers of 64 bits or more:
narrower arithmetic may wrap, and a wrapped `i + 1` is not `i + 1`.

The alias analysis proves that two accesses touch different elements by
showing that the difference of their forms is never 0 (`can_be_zero`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass

from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import DYNAMIC_INDEX, IndexType, IntegerAttr, IntegerType, MemRefType, NoneAttr, StridedLayoutAttr
from xdsl.ir import Attribute, OpResult, SSAValue


@dataclass(frozen=True)
class ViewIndex:
    """The `position`-th index of an access through a view (a placeholder)."""

    position: int


class Fresh:
    """An unknown integer distinct from every other symbol, e.g. a value
    computed in another iteration of a loop. Compared by identity."""

    __slots__ = ("label",)

    def __init__(self, label: str):
        self.label = label

    def __repr__(self) -> str:
        return self.label


Symbol = Hashable
"""An SSAValue, a ViewIndex, a Fresh unknown, or another hashable marker."""

Interval = tuple[int | None, int | None]
"""Inclusive integer bounds; None is unbounded on that side."""

UNBOUNDED: Interval = (None, None)


class Affine:
    """`const + sum(coeff * symbol)`; immutable, terms with coefficient 0 dropped."""

    __slots__ = ("const", "terms")

    def __init__(self, const: int = 0, terms: Mapping[Symbol, int] | None = None):
        self.const = const
        self.terms: dict[Symbol, int] = {k: v for k, v in (terms or {}).items() if v != 0}

    @staticmethod
    def symbol(s: Symbol, coeff: int = 1) -> Affine:
        return Affine(0, {s: coeff})

    def __add__(self, other: Affine) -> Affine:
        terms = dict(self.terms)
        for k, v in other.terms.items():
            terms[k] = terms.get(k, 0) + v
        return Affine(self.const + other.const, terms)

    def scale(self, c: int) -> Affine:
        return Affine(self.const * c, {k: v * c for k, v in self.terms.items()})

    def __sub__(self, other: Affine) -> Affine:
        return self + other.scale(-1)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Affine) and self.const == other.const and self.terms == other.terms

    def __hash__(self) -> int:
        return hash((self.const, frozenset(self.terms.items())))

    @property
    def is_constant(self) -> bool:
        return not self.terms

    def substitute(self, replace: Callable[[Symbol], Affine | None]) -> Affine | None:
        """Replace each symbol by `replace(symbol)` (which returns the symbol
        itself to keep it); None when a symbol is replaced by an unknown."""
        result = Affine(self.const)
        for sym, coeff in self.terms.items():
            new = replace(sym)
            if new is None:
                return None
            result = result + new.scale(coeff)
        return result

    def render(self, name: Callable[[SSAValue], str]) -> str:
        """Readable text, e.g. `%i + 1`, `2*%i - %j`, `?t` for a fresh symbol."""
        text = ""
        for sym, coeff in self.terms.items():
            label = name(sym) if isinstance(sym, SSAValue) else repr(sym)
            magnitude = "" if abs(coeff) == 1 else f"{abs(coeff)}*"
            if not text:
                text = f"{'-' if coeff < 0 else ''}{magnitude}{label}"
            else:
                text += f" {'-' if coeff < 0 else '+'} {magnitude}{label}"
        if not text:
            return str(self.const)
        if self.const:
            text += f" {'-' if self.const < 0 else '+'} {abs(self.const)}"
        return text

    def __repr__(self) -> str:
        return self.render(lambda v: f"%{v.name_hint or '?'}")


def constant_of(value: SSAValue) -> int | None:
    """The integer an `arith.constant` defines, else None."""
    if isinstance(value, OpResult) and isinstance(value.op, arith.ConstantOp):
        attr = value.op.value
        if isinstance(attr, IntegerAttr):
            return attr.value.data
    return None


def _wide(t: Attribute) -> bool:
    return isinstance(t, IndexType) or (isinstance(t, IntegerType) and t.width.data >= 64)


MAX_DEPTH = 64
"""Deeper expressions stay opaque (keeps the recursion bounded)."""


def affine_form(
    value: SSAValue, cache: dict[SSAValue, Affine] | None = None, depth: int = 0
) -> Affine:
    """The affine form of an integer SSA value (see the module docstring)."""
    if cache is not None and value in cache:
        return cache[value]
    form = _affine_form(value, cache, depth)
    if cache is not None:
        cache[value] = form
    return form


def _affine_form(value: SSAValue, cache: dict[SSAValue, Affine] | None, depth: int) -> Affine:
    c = constant_of(value)
    if c is not None:
        return Affine(c)
    if not isinstance(value, OpResult) or depth >= MAX_DEPTH:
        return Affine.symbol(value)
    op = value.op
    if isinstance(op, memref.ExtractStridedMetaDataOp):
        # The offset or a stride of a memref whose type fixes it (the
        # shadow's view `dx[::-1]` is built from dx's own metadata: with
        # dx's identity layout its stride is -1, an affine view).
        static = static_metadata(op.source.type, value.index)
        return Affine.symbol(value) if static is None else Affine(static)
    if isinstance(op, arith.IndexCastOp):
        # A cast to 64 bits keeps the value (sign extension); a narrowing
        # cast may wrap, so its result is opaque.
        if not _wide(op.result.type):
            return Affine.symbol(value)
        return affine_form(op.input, cache, depth + 1)
    if not _wide(value.type):
        return Affine.symbol(value)
    if isinstance(op, arith.AddiOp):
        return affine_form(op.lhs, cache, depth + 1) + affine_form(op.rhs, cache, depth + 1)
    if isinstance(op, arith.SubiOp):
        return affine_form(op.lhs, cache, depth + 1) - affine_form(op.rhs, cache, depth + 1)
    if isinstance(op, arith.MuliOp):
        lhs, rhs = affine_form(op.lhs, cache, depth + 1), affine_form(op.rhs, cache, depth + 1)
        if lhs.is_constant:
            return rhs.scale(lhs.const)
        if rhs.is_constant:
            return lhs.scale(rhs.const)
    return Affine.symbol(value)


def static_metadata(t: Attribute, position: int) -> int | None:
    """Result `position` of `memref.extract_strided_metadata` on a memref of
    type `t` (base, offset, sizes..., strides...) when the type fixes it:
    the offset and strides of the identity layout (0; row-major products of
    static sizes) or of a strided layout's static entries; else None."""
    if not isinstance(t, MemRefType) or (layout := layout_strides(t)) is None:
        return None
    strides, offset = layout
    rank = len(strides)
    if position == 1:
        return offset
    if 2 + rank <= position < 2 + 2 * rank:
        return strides[position - 2 - rank]
    return None


def layout_strides(t: MemRefType) -> tuple[list[int | None], int | None] | None:
    """Strides and offset in elements (None: dynamic), or None when the
    layout is an affine map we do not interpret."""
    layout = t.layout
    shape = list(t.get_shape())
    if isinstance(layout, StridedLayoutAttr):
        strides = [None if isinstance(s, NoneAttr) else s.data for s in layout.strides.data]
        off = layout.offset
        return strides, None if isinstance(off, NoneAttr) else off.data
    if not isinstance(layout, NoneAttr):
        return None
    strides: list[int | None] = []
    running: int | None = 1
    for size in reversed(shape):
        strides.append(running)
        running = None if running is None or size == DYNAMIC_INDEX else running * size
    strides.reverse()
    return strides, 0


def interval_of(form: Affine, ranges: Mapping[Symbol, Interval]) -> Interval | None:
    """Bounds of `form` when its symbols range independently over `ranges`
    (unlisted symbols are unbounded); None when some range is empty."""
    lo: int | None = form.const
    hi: int | None = form.const
    for sym, coeff in form.terms.items():
        s_lo, s_hi = ranges.get(sym, UNBOUNDED)
        if s_lo is not None and s_hi is not None and s_lo > s_hi:
            return None
        t_lo, t_hi = (s_lo, s_hi) if coeff > 0 else (s_hi, s_lo)
        lo = None if lo is None or t_lo is None else lo + coeff * t_lo
        hi = None if hi is None or t_hi is None else hi + coeff * t_hi
    return lo, hi


def can_be_zero(form: Affine, ranges: Mapping[Symbol, Interval]) -> bool:
    """False only if `form` is nonzero for every integer value of its symbols
    within their ranges. Two exact tests: the GCD test (sum(c_k*s_k) = -c0
    needs gcd(c_k) to divide c0) and the interval test (0 must lie between
    the bounds). For one symbol the two together are exact."""
    if form.is_constant:
        return form.const == 0
    if form.const % math.gcd(*form.terms.values()) != 0:
        return False
    bounds = interval_of(form, ranges)
    if bounds is None:
        return False
    lo, hi = bounds
    return (lo is None or lo <= 0) and (hi is None or hi >= 0)
