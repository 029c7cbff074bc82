"""Array variables rebound inside a loop: `u, unew = unew, u` (time
stepping with two buffers), `u = unew`.

Such a variable is a choice among the arrays that exist when the loop
starts (the candidates: the arrays of the variables the loop mentions). The
loop carries, for each rebound variable, an `index` selector (key
`selector_key(name)` in the environment: a scalar variable like any other,
so scf.for/scf.while carry it and scf.if yields it), and the variable's
memref is `arith.select` of the candidates by the selector, made where the
selector is bound (the top of the body, after an if, after the loop).
Assigning an array variable sets its selector to the assigned array's.

Why selects and not memref iter_args: `arith.select` between memrefs is
what the alias analysis (`memref_views.chosen_sources`: the result may
address any operand), the activity analysis (the operands' memories merge)
and the reverse and forward engines (`SHADOW_RULES`: the shadow is the same
choice among the shadows) already understand, and the selector is an
inactive `index` the cache planner handles like a loop counter; a memref
iter_arg would be a value of unknown origin to all of them. The cost is
one `arith.cmpi` + `arith.select` per candidate and rebound variable at
each binding, none per element.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import DYNAMIC_INDEX, MemRefType, NoneAttr, StridedLayoutAttr
from xdsl.ir import SSAValue

from adpasses.frontend.values import Array, Scalar


@dataclass
class Selection:
    """The arrays a loop's rebound variables choose among, the selector of
    each memref made by a choice, and the selectors the variables had in an
    enclosing loop that rebinds them too."""

    candidates: list[SSAValue]
    selected_by: dict[SSAValue, SSAValue]
    outer: dict[str, Scalar]


def selector_key(name: str) -> str:
    return "#" + name


def is_selector(name: str) -> bool:
    return name.startswith("#")


class ArrayVariableMixin:
    def array_candidates(self, stmt: ast.stmt, names: list[str]) -> list[SSAValue]:
        """The arrays a rebound array variable of `stmt` (a loop) may hold:
        those of the variables it is rebound to, transitively (`u, unew =
        unew, u`: u and unew), each once. Arrays the loop only reads are not
        candidates (they would be choices, hence possibly written, and must
        match the dtype and rank). Where a rebinding's source is not a plain
        name, every array variable the loop mentions is a candidate."""
        sources = _rebinding_sources(stmt)
        wanted, stack = set(names), list(names)
        while stack:
            for source in sources.get(stack.pop(), ()):
                if source is None:
                    wanted = {n.id for n in ast.walk(stmt) if isinstance(n, ast.Name)} | set(names)
                    stack = []
                    break
                if source not in wanted:
                    wanted.add(source)
                    stack.append(source)
        values: list[SSAValue] = []
        for name, v in self.env.items():
            if name in wanted and isinstance(v, Array) and v.value not in values:
                values.append(v.value)
        return values

    def start_selection(self, names: list[str], stmt: ast.stmt) -> list[SSAValue]:
        """Give each array variable the loop rebinds a selector (its index
        among the candidates); returns the candidates."""
        candidates = self.array_candidates(stmt, names)
        first = candidates[0].type
        computed = [n for n in names if None in _rebinding_sources(stmt).get(n, ())]
        for v in candidates:
            t = v.type
            if not (isinstance(t, MemRefType) and isinstance(first, MemRefType)
                    and t.element_type == first.element_type and len(t.get_shape()) == len(first.get_shape())):
                if computed:  # `h = np.tanh(W @ h)`: every array of the loop became a candidate
                    name = computed[0]
                    self.error(stmt, f"array variable '{name}' is rebound inside this loop to an array "
                                     "computed in it, not one of the arrays the loop started with; allocate "
                                     "the buffers before the loop and copy into them "
                                     f"({name}[:] = ...)")
                self.error(stmt, f"array variables {', '.join(repr(n) for n in names)} are rebound in this "
                                 "loop among arrays of different dtypes or numbers of dimensions; use arrays "
                                 "of one dtype and shape")
        outer = {n: self.env[selector_key(n)] for n in names if selector_key(n) in self.env}
        self.selection_frames.append(Selection(candidates, {}, outer))
        for name in names:
            self.env[selector_key(name)] = Scalar(self.const_index(candidates.index(self.env[name].value)))
        return candidates

    def finish_selection(self, names: list[str], stmt: ast.stmt) -> None:
        """After the loop: each variable is the candidate its final selector
        picks; inside an enclosing loop that rebinds it too, its selector
        there is the one of that candidate."""
        frame = self.selection_frames[-1]
        for name in names:
            self.select_array(name)
        self.selection_frames.pop()
        for name in names:
            inner = self.env.pop(selector_key(name)).value
            if name not in frame.outer:
                continue
            outer = [self.selector_in(self.selection_frames[-1], v) for v in frame.candidates]
            if any(o is None for o in outer):
                self.error(stmt, f"array variable '{name}' is rebound in nested loops to "
                                              "arrays the outer loop did not start with; allocate the "
                                              "buffers before the outer loop")
            chosen = outer[-1]
            for j in range(len(outer) - 2, -1, -1):
                is_j = self.emit(arith.CmpiOp(inner, self.const_index(j), "eq")).results[0]
                chosen = self.emit(arith.SelectOp(is_j, outer[j], chosen)).results[0]
            self.env[selector_key(name)] = Scalar(chosen)
            self.selection_frames[-1].selected_by[self.env[name].value] = chosen

    def selector_in(self, frame: "Selection", value: SSAValue) -> SSAValue | None:
        if value in frame.selected_by:
            return frame.selected_by[value]
        if value in frame.candidates:
            return self.const_index(frame.candidates.index(value))
        return None

    def select_array(self, name: str) -> None:
        """env[name] := the candidate its selector picks."""
        frame = self.selection_frames[-1]
        candidates = frame.candidates
        selector = self.env[selector_key(name)].value
        common = _common_type(candidates)
        values = [self.as_memref_type(v, common) for v in candidates]
        chosen = values[-1]
        for j in range(len(values) - 2, -1, -1):
            is_j = self.emit(arith.CmpiOp(selector, self.const_index(j), "eq")).results[0]
            chosen = self.emit(arith.SelectOp(is_j, values[j], chosen)).results[0]
        self.env[name] = Array(chosen)
        frame.selected_by[chosen] = selector

    def as_memref_type(self, value: SSAValue, t: MemRefType) -> SSAValue:
        if value.type == t:
            return value
        return self.emit(memref.CastOp.get(value, t)).results[0]

    def rebind_selected(self, name: str, value: object, stmt: ast.AST) -> None:
        """`name = value` for a variable with a selector: the selector of
        the array assigned."""
        found = self.selector_in(self.selection_frames[-1], value.value) if isinstance(value, Array) else None
        selector = Scalar(found) if found is not None else None
        if selector is None:
            self.error(stmt, f"array variable '{name}' is rebound inside a loop to an array that is not one "
                             "of the arrays the loop started with (an array or view made inside the loop); "
                             "allocate the buffers before the loop and swap or copy into them "
                             "(u[:] = ...)")
        self.env[selector_key(name)] = selector
        self.env[name] = value


def _common_type(values: list[SSAValue]) -> MemRefType:
    common = common_memref_type(values)
    assert common is not None  # start_selection checked dtypes and ranks
    return common


def common_memref_type(values: list[SSAValue]) -> MemRefType | None:
    """The type all these memrefs convert to with memref.cast (theirs if
    they share it, else the fully dynamic strided layout); None for
    different element types or ranks."""
    first = values[0].type
    if not all(isinstance(v.type, MemRefType) and v.type.element_type == first.element_type
               and len(v.type.get_shape()) == len(first.get_shape()) for v in values):
        return None
    if all(v.type == first for v in values):
        return first
    rank = len(first.get_shape())
    return MemRefType(first.element_type, [DYNAMIC_INDEX] * rank,
                      StridedLayoutAttr([NoneAttr()] * rank, NoneAttr()))


def _rebinding_sources(stmt: ast.stmt) -> dict[str, set[str | None]]:
    """For each name assigned in `stmt`, the names assigned to it (`a = b`,
    `a, b = b, a`); None stands for any other source."""
    found: dict[str, set[str | None]] = {}

    def pair(target: ast.expr, value: ast.expr | None) -> None:
        if isinstance(target, (ast.Tuple, ast.List)):
            if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts):
                for t, v in zip(target.elts, value.elts):
                    pair(t, v)
            else:
                for t in target.elts:
                    pair(t, None)
        elif isinstance(target, ast.Name):
            found.setdefault(target.id, set()).add(value.id if isinstance(value, ast.Name) else None)

    for node in ast.walk(stmt):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                pair(target, node.value)
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            pair(node.target, node.value)
        elif isinstance(node, (ast.For, ast.AsyncFor)):
            pair(node.target, None)
        elif isinstance(node, ast.NamedExpr):
            pair(node.target, None)
    return found
