"""Assignment to slices and views: `x[1:] = 0.0`, `R[:, 0] = np.inf`,
`out[i, :] = v`, `x[a:b] += y[c:d]`, as numpy does them.

The target is a view (`ArrayMixin.view`: a memref.subview or
reinterpret_cast of the caller's memory) and the assignment a loop nest
over it: a number is stored in every element; an array value is
broadcast as numpy broadcasts (trailing dimensions aligned, a size-1
dimension repeated), and shapes that do not broadcast stop the call with
numpy's `ValueError` text and the Python location (`ad.raise_if`).
numpy reads an overlapping source as if it were copied first
(`x[1:] = x[:-1]` shifts): a view of the target's own array is copied
into a temporary first; another argument (which may be the target's
memory only at run time: `f(y, y)`) is copied only when the byte ranges
overlap (`ad.overlaps`, frontend/overlap.py); a local array other than
the target's, or any array when the target is local, is read in place. An array expression
(`h[:] = np.tanh(z + b)`) is written straight into the target, one
generic, when the same proof holds for every array it reads (or it reads
the target itself at the element written, `x[:] = np.where(m, 0.0, x)`);
otherwise it is computed into a new local array first.
"""

from __future__ import annotations

import ast

from xdsl.dialects import arith, memref, scf
from xdsl.dialects.builtin import DYNAMIC_INDEX, IndexType, MemRefType
from xdsl.dialects.linalg import ops as linalg
from xdsl.ir import Block, Region, SSAValue

from adpasses.analysis.memref_views import is_allocation
from adpasses.core.effects import is_pure
from adpasses.dialects.ad import RaiseIfOp
from adpasses.frontend.array_exprs import _dims_map, _parallel
from adpasses.frontend.values import Array, ArrayExpr, Scalar

_MAY_STOP = (arith.DivSIOp, arith.DivUIOp, arith.RemSIOp, arith.RemUIOp, arith.FloorDivSIOp, arith.CeilDivSIOp,
             arith.FPToSIOp, arith.FPToUIOp)
"""Pure to the effects, but lowered with a check that stops the call
(division by zero; a float that does not fit the integer)."""


class SliceMixin:
    def is_element_target(self, a: Array, target: ast.Subscript) -> bool:
        items = self.subscript_items(target, a.ndim)
        return len(items) == a.ndim and not any(isinstance(i, ast.Slice) for i in items)

    def store_slice(self, a: Array, target: ast.Subscript, value: object, op: ast.operator | None,
                    stmt: ast.stmt) -> None:
        """`a[target] = value` (op None) or `a[target] op= value` where the
        subscript selects a view."""
        items = self.subscript_items(target, a.ndim)
        if len(items) > a.ndim:
            self.error(target, f"too many indices: the array has {a.ndim} dimension(s)")
        expr = value if isinstance(value, ArrayExpr) and op is None else None
        if expr is None:
            value = self.materialize(value, stmt)  # an array expression (array_exprs.py): a new local array
        with self.at(target):
            dest = self.view(a, items, target)
        sizes = [self.dim(dest, d) for d in range(dest.ndim)]
        if expr is not None:
            if self._store_in_place(expr, a, items, dest, sizes, stmt):
                return
            value = self.materialize(expr, stmt)
        if isinstance(value, Scalar):
            self._update_nest(dest, sizes, lambda idx: value, op, stmt)
            return
        if not isinstance(value, Array):
            self.error(stmt, "only a number or an array can be assigned to a slice")
        if value.ndim > dest.ndim:
            self.error(stmt, f"cannot assign a {value.ndim}-D array to a {dest.ndim}-D slice")
        with self.at(stmt):
            source = self._broadcast_source(value, dest, sizes, op is not None)
        unknown = self.overlap_unknown(source.value, dest.value)  # type: ignore[attr-defined]
        if self._may_overlap(source, dest) and not unknown:
            with self.at(stmt):
                source = self._copied(source)
        lead = dest.ndim - source.ndim
        with self.at(stmt):
            ones = [self.emit(arith.CmpiOp(self.dim(source, j), self.const_index(1), "eq")).results[0]
                    for j in range(source.ndim)]

        def store(copies: dict[SSAValue, SSAValue]) -> None:
            read = copies.get(source.value, source.value)

            def element(idx: list[SSAValue]) -> Scalar:
                # a size-1 dimension of the source is repeated (numpy's broadcast)
                src_idx = [self.emit(arith.SelectOp(one, self.const_index(0), i)).results[0]
                           for one, i in zip(ones, idx[lead:])]
                return self.loaded(self.emit(memref.LoadOp.get(read, src_idx)).res)

            self._update_nest(dest, sizes, element, op, stmt)

        # Another argument (`x[1:] = y[:-1]` with f(z, z)): tested per call,
        # copied only when it overlaps the target (frontend/overlap.py).
        self.overlap_guarded(dest.value, [source.value] if unknown else [], store, stmt)  # type: ignore[attr-defined]

    def _store_in_place(self, expr: ArrayExpr, a: Array, items: list[ast.expr], dest: Array,
                        sizes: list[SSAValue], stmt: ast.stmt) -> bool:
        """`dest = expr` as one generic writing `dest` itself, with no
        temporary, when that reads what numpy's copy-first semantics read:
        every array the expression reads is provably other memory than the
        target's (`_may_overlap`), or is the sliced array `a` itself, read
        at the very element written (`a[:] = f(a)`: the target is all of `a`,
        the leaf unbroadcast), and the expression cannot stop the call
        halfway (an integer division's ZeroDivisionError, a float-to-int
        conversion's check: numpy would have written nothing). False: the
        caller materialises the expression first."""
        lead = dest.ndim - expr.ndim
        if lead < 0:
            return False
        whole = all(isinstance(i, ast.Slice) and i.lower is None and i.upper is None and i.step is None
                    for i in items)
        unknown: list[SSAValue] = []  # other arguments: may be the target's memory at run time
        for m, dims in expr.leaves:
            if not self._may_overlap(Array(m), dest):
                continue
            if self.overlap_unknown(m, dest.value):  # type: ignore[attr-defined]
                unknown.append(m)
                continue
            if not (m is a.value and whole and lead == 0 and dims == tuple(range(dest.ndim))):
                return False
            if self.may_overlap_itself(a.value):  # type: ignore[attr-defined]
                return False  # `y[:] = y + 1` with y's elements sharing memory: read a copy
        block, _ = self.generic_block([m for m, _ in expr.leaves], expr.body, element=dest.element, node=stmt)
        if not all(isinstance(op, linalg.YieldOp) or (is_pure(op) and not isinstance(op, _MAY_STOP))
                   for op in block.ops):
            block.erase()
            return False
        with self.at(stmt):
            self._check_broadcast(expr.shape, sizes, False)
        shifted = [tuple(d + lead for d in dims) for _, dims in expr.leaves]
        maps = [_dims_map(dest.ndim, d) for d in shifted] + [_dims_map(dest.ndim, range(dest.ndim))]

        def store(copies: dict[SSAValue, SSAValue]) -> None:
            # The block made above serves the branch reading the leaves themselves.
            body = block if not copies else self.generic_block(
                [m for m, _ in expr.leaves], expr.body, element=dest.element, node=stmt)[0]
            with self.at(stmt):
                operands = [self.leaf_operand(copies.get(m, m), d, sizes) for (m, _), d in zip(expr.leaves, shifted)]
                self.emit(linalg.GenericOp(operands, [dest.value], Region(body), maps, _parallel(dest.ndim)))

        # `out[:] = e(x)` with x another argument, maybe out's memory
        # (`f(y, y)`): tested per call, x copied only when they overlap.
        self.overlap_guarded(dest.value, unknown, store, stmt)  # type: ignore[attr-defined]
        return True

    def _broadcast_source(self, value: Array, dest: Array, sizes: list[SSAValue], update: bool) -> Array:
        """Stop with numpy's ValueError unless `value` broadcasts to `dest`."""
        self._check_broadcast([self.dim(value, j) for j in range(value.ndim)], sizes, update)
        return value

    def _check_broadcast(self, src_sizes: list[SSAValue], sizes: list[SSAValue], update: bool) -> None:
        """Stop with numpy's ValueError unless an array of `src_sizes`
        broadcasts to `sizes`."""
        lead = len(sizes) - len(src_sizes)
        bad = None
        for j, n in enumerate(src_sizes):
            differ = self.emit(arith.CmpiOp(n, sizes[lead + j], "ne")).results[0]
            not_one = self.emit(arith.CmpiOp(n, self.const_index(1), "ne")).results[0]
            wrong = self.emit(arith.AndIOp(differ, not_one)).results[0]
            bad = wrong if bad is None else self.emit(arith.OrIOp(bad, wrong)).results[0]
        if bad is not None:
            s, d = f"{{0:shape{len(src_sizes)}}}", f"{{1:shape{len(sizes)}}}"
            message = (f"operands could not be broadcast together with shapes {d} {s} {d}" if update
                       else f"could not broadcast input array from shape {s} into shape {d}")
            self.emit(RaiseIfOp(bad, "ValueError", message, [self._packed(src_sizes), self._packed(sizes)]))

    def _packed(self, sizes: list[SSAValue]) -> SSAValue:
        """Sizes packed into one index for an error message (64 // len bits
        each, the first highest; adpasses.core.stop_codes unpacks them)."""
        bits = 64 // len(sizes)
        packed = sizes[0]
        for n in sizes[1:]:
            shifted = self.emit(arith.ShLIOp(packed, self.const_index(bits))).results[0]
            packed = self.emit(arith.OrIOp(shifted, n)).results[0]
        return packed

    def _may_overlap(self, source: Array, dest: Array) -> bool:
        # Through views and through callees' results that are views of what
        # was passed to them (`r = flip(h); h[1:] = r[:-1]`): memory_root.
        a, b = self.memory_root(source.value), self.memory_root(dest.value)  # type: ignore[attr-defined]
        if a is b:
            return True
        return not (is_allocation(a) or is_allocation(b))  # two arguments may share memory

    def _copied(self, source: Array) -> Array:
        """A C-contiguous copy of `source`, freed at the end of the scope."""
        sizes = [self.dim(source, d) for d in range(source.ndim)]
        mtype = MemRefType(source.element, [DYNAMIC_INDEX] * source.ndim)
        buffer = self.emit(memref.AllocOp(sizes, [], mtype)).results[0]
        self.register_allocation(buffer)

        def body(idx: list[SSAValue]) -> None:
            v = self.emit(memref.LoadOp.get(source.value, idx)).res
            self.emit(memref.StoreOp.get(v, buffer, idx))

        self.loop_nest(sizes, body)
        return Array(buffer)

    def _update_nest(self, dest: Array, sizes: list[SSAValue], element, op: ast.operator | None,  # type: ignore[no-untyped-def]
                     stmt: ast.stmt) -> None:
        """`_assign_nest`; for `dest op= ...` on a target whose elements may
        share memory (a stride of 0), guarded by `ad.self_overlaps`: the
        current values are read from a copy when they do, as numpy reads
        them (frontend/overlap.py)."""
        if op is None or not self.may_overlap_itself(dest.value):  # type: ignore[attr-defined]
            self._assign_nest(dest, sizes, element, op, stmt)
            return

        def update(copies: dict[SSAValue, SSAValue]) -> None:
            self._assign_nest(dest, sizes, element, op, stmt, copies.get(dest.value))

        self.overlap_guarded(dest.value, [], update, stmt, itself=True)  # type: ignore[attr-defined]

    def _assign_nest(self, dest: Array, sizes: list[SSAValue], element, op: ast.operator | None,  # type: ignore[no-untyped-def]
                     stmt: ast.stmt, current_from: SSAValue | None = None) -> None:
        def body(idx: list[SSAValue]) -> None:
            value = element(idx)
            if op is not None:
                read = current_from if current_from is not None else dest.value
                current = self.loaded(self.emit(memref.LoadOp.get(read, idx)).res)
                value = self.binary(op, current, value, stmt)
            self.emit(memref.StoreOp.get(self.convert_to(value, dest.element, stmt), dest.value, idx))

        with self.at(stmt):
            self.loop_nest(sizes, body)

    def loop_nest(self, sizes: list[SSAValue], body) -> None:  # type: ignore[no-untyped-def]
        """for i0 in range(sizes[0]): for i1 ...: body([i0, i1, ...])."""

        def nest(depth: int, indices: list[SSAValue]) -> None:
            if depth == len(sizes):
                body(indices)
                return
            block = Block(arg_types=[IndexType()])
            self.lower_bounds[block.args[0]] = 0
            with self.inserting_at_end(block):
                nest(depth + 1, [*indices, block.args[0]])
                self.emit(scf.YieldOp())
            self.emit(scf.ForOp(self.const_index(0), sizes[depth], self.const_index(1), [], block))

        nest(0, [])
