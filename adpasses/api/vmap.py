"""`vmap(f, in_axes=0, out_axes=0)`: f over a batch axis, in one compiled loop.

`f` is a jitted function (or a plain one), `grad(f)` / `value_and_grad(f)`,
`hessian(f)`, `hvp(f)` (of a float-valued f), or `partial(jvp, f)`. vmap
asks it for the function it would call for one batch element (`_kernel`:
the primal, the gradient, the tangent function, the Hessian's driver,
not yet compiled, and how each of its
parameters is fed from the arguments), adds a driver looping over the
batch around it (`transforms.batch_loops.add_batch_driver`), and compiles
the two together: one native call per vmap call, the per-element function
inlined into the loop by LLVM.

Per argument, `in_axes` is an int (the batch axis of an array argument)
or None (the argument is the same for every element). Batched 1-D arrays
give floats (ints, bools) per element. The batch is moved to axis 0 and
made C-contiguous when it is not (a copy), so that each element is a
C-contiguous array, which the per-element function is compiled for.
Every result gets the batch axis at `out_axes` (an int, or one per
result of a tuple). Like the function it maps, vmap leaves its arguments
unchanged, except arrays a jitted f itself writes (an output argument):
their rows are written, as a loop of calls would.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
import math
import mmap

import numpy as np

from adpasses.api import shadows
from adpasses.core.diagnostics import CompileError, for_user
from adpasses.native.arguments import plain_arguments

# How a parameter of the per-element function is fed (see _Param).
ARG, COPY, PRISTINE, ZEROS, OUT, CONST, BUFFER = "arg", "copy", "pristine", "zeros", "out", "const", "buffer"


@dataclass(frozen=True)
class _Param:
    """One parameter of the per-element function:
    ARG k: argument k (batched: its element; else the argument itself);
    COPY k: argument k, which the function writes while the caller's must
      stay unchanged (a copy of the batch; an unbatched one restored before
      each element);
    PRISTINE k: argument k read only (a driver's pristine copy);
    ZEROS k: zeros of argument k's per-element shape and dtype: output
      `out` (per element, batched), or scratch (out None: zeroed per element);
    OUT: output `out`, written whole, of `dtype` and per-element shape
      `shape`: (argument, axis) pairs, the sizes of those arguments' axes;
    CONST: the float `value`;
    BUFFER k: a buffer of argument k's per-element shape and dtype, any
      contents, the same for every element (a driver's scratch)."""

    kind: str
    arg: int = -1
    out: int | None = None
    shape: tuple[tuple[int, int], ...] = ()
    dtype: object = None
    value: float = 0.0


@dataclass
class _Kernel:
    """The per-element function, built but not compiled."""

    module: object
    entry: str
    record: object           # the compile record (api/compile_log)
    params: list[_Param]
    results: list[int | None] | None  # per result of the entry: the output it is, or None (dropped); None: all dropped
    n_outputs: int
    assemble: Callable[[list], object]   # outputs -> what f returns
    written: tuple[int, ...] = ()        # arguments the function writes in place (a jitted f's outputs)
    static_shapes: bool = False          # compiled for the element shapes of its examples (a Hessian)


def vmap(f: object, in_axes: object = 0, out_axes: object = 0, parallel: bool = False) -> Callable:
    """f mapped over a batch axis of its arguments, like jax.vmap: the
    results of `f` on each batch element, stacked along `out_axes`. `f` is
    a jitted (or plain Python) function returning floats, or `grad(f)`,
    `value_and_grad(f)`, `hessian(f)` or `hvp(f)` of one, or
    `functools.partial(adpasses.jvp, f)` (called `(primals, tangents)`). `in_axes`:
    an int or None for every argument, or a tuple with one per argument
    (None: the same value for every element). One compiled loop over the
    batch per call (no Python loop). `parallel=True`: the loop over the
    batch runs on the worker pool (adpasses.set_num_threads) when the
    elements are proven independent, like a loop of jit(parallel=True);
    else serially (docs/parallel.md)."""
    import functools

    from adpasses.api.forward import HvpCallable, SweepCallable, jvp
    from adpasses.api.functions import as_jit
    from adpasses.api.gradcall import GradCallable

    if isinstance(f, VmapCallable):
        raise TypeError(f"vmap({f.__name__}): vmap of a vmap is not supported; batch the arguments "
                        "of the inner function over one axis (reshape the leading axes into one)")
    if isinstance(f, functools.partial) and f.func is jvp and len(f.args) == 1 and not f.keywords:
        inner: object = JvpOf(_as_jit(f.args[0], as_jit))
    elif isinstance(f, (GradCallable, SweepCallable, HvpCallable)):
        inner = f
    else:
        inner = _as_jit(f, as_jit)
    _check_axes_spec(in_axes, "in_axes", allow_none=True, nested=isinstance(inner, JvpOf))
    _check_axes_spec(out_axes, "out_axes", allow_none=False)
    if not isinstance(parallel, (bool, np.bool_)):
        raise TypeError(f"vmap: parallel must be True or False; got {parallel!r}")
    return VmapCallable(inner, in_axes, out_axes, bool(parallel))


def _as_jit(f: object, as_jit: Callable) -> object:
    try:
        return as_jit(f)
    except TypeError:
        raise TypeError(f"vmap: f must be a Python function, an adpasses.jit function, grad, "
                        "value_and_grad, hessian or hvp of one, or functools.partial(adpasses.jvp, f); "
                        f"got {type(f).__name__}") from None


class JvpOf:
    """What `vmap(functools.partial(adpasses.jvp, f))` maps: called as
    `(primals, tangents)`, two tuples, like jax.vmap of jax.jvp."""

    def __init__(self, jf) -> None:  # type: ignore[no-untyped-def]
        self.jf = jf
        self.__name__ = f"jvp({jf.__name__})"


def _is_axis(a: object) -> bool:
    return isinstance(a, (int, np.integer)) and not isinstance(a, (bool, np.bool_))


def _check_axes_spec(axes: object, what: str, allow_none: bool, nested: bool = False) -> None:
    items = axes if isinstance(axes, (tuple, list)) else (axes,)
    if nested:  # partial(jvp, f): (primals' axes, tangents' axes), each possibly a tuple
        items = [b for a in items for b in (a if isinstance(a, (tuple, list)) else (a,))]
    for a in items:
        if not (_is_axis(a) or (allow_none and a is None)):
            allowed = "an int or None" if allow_none else "an int"
            raise TypeError(f"vmap: {what} must be {allowed}, or a tuple of them (one per "
                            f"{'argument' if allow_none else 'result'}); got {axes!r}")


def _tuples(axes: object) -> object:
    """Lists of axes as tuples (nested ones too)."""
    return tuple(_tuples(a) for a in axes) if isinstance(axes, (tuple, list)) else axes


class VmapCallable:
    """The callable `vmap(f, in_axes, out_axes)` returns."""

    def __init__(self, inner: object, in_axes: object, out_axes: object, parallel: bool = False):
        self.inner = inner
        self.parallel = parallel
        self.parallel_loops: list = []
        """With parallel=True, after a call: the batch loop of the last
        signature compiled (`cache.report.ParallelLoop`: parallel or
        serial, and why), as the cache report lists parallel loops."""
        self.in_axes = _tuples(in_axes)
        self.out_axes = tuple(out_axes) if isinstance(out_axes, list) else out_axes
        self.__name__ = f"vmap({inner.__name__})"  # type: ignore[attr-defined]
        self._plans: dict[tuple, _Plan] = {}
        self._by_shape: bool | None = None  # _keyed_by_shape(inner), on the first call
        self._dispatch = None  # the DispatchTable of the fast paths (gradcall.install_dispatch)
        self._fast: set[int] = set()  # signature codes with a fast path (or none possible)

    def __repr__(self) -> str:
        return f"<adpasses.{self.__name__}>"

    def __call__(self, *args: object) -> object:
        # Replaced by a dispatch builtin once a fast path exists (_fast_path):
        # this method is then its fallback.
        try:
            if isinstance(self.inner, JvpOf):
                return self._call(*self._flat_jvp_arguments(args))
            return self._call(args, self._axes(len(args)))
        except CompileError as err:
            raise for_user(err)  # the user's line and the message, not the compiler's frames

    def _slow_call(self, *args: object) -> object:
        return VmapCallable.__call__(self, *args)

    # -- one call ------------------------------------------------------------------

    def _axes(self, n: int) -> tuple:
        if not isinstance(self.in_axes, tuple):
            return (self.in_axes,) * n
        if len(self.in_axes) != n:
            raise ValueError(f"{self.__name__}: in_axes has {len(self.in_axes)} entries but the call "
                             f"has {n} arguments; give one per argument (None: not batched)")
        return self.in_axes

    def _flat_jvp_arguments(self, args: tuple) -> tuple[tuple, tuple]:
        """(primals, tangents) as one tuple of arguments, primals first, and
        their axes: in_axes is one int/None for all, or a pair (for the
        primals, for the tangents) of an int/None or a tuple per argument.
        A tangent None (the argument held constant) is not batched."""
        name = self.__name__
        if len(args) != 2 or not all(isinstance(a, (tuple, list)) for a in args):
            raise TypeError(f"{name}: call it with (primals, tangents), two tuples with one entry per "
                            "argument, like jax.vmap(partial(jax.jvp, f))")
        primals, tangents = tuple(args[0]), tuple(args[1])
        if len(primals) != len(tangents):
            raise ValueError(f"{name}: {len(primals)} primals but {len(tangents)} tangents; give one "
                             "tangent per primal (None for an argument held constant)")
        n = len(primals)
        spec = self.in_axes if isinstance(self.in_axes, tuple) else (self.in_axes, self.in_axes)
        if len(spec) != 2:
            raise ValueError(f"{name}: in_axes must be one int/None or a pair (primals, tangents), "
                             f"got {self.in_axes!r}")
        axes: list[object] = []
        for part in spec:
            if isinstance(part, tuple):
                if len(part) != n:
                    raise ValueError(f"{name}: in_axes {part!r} has {len(part)} entries for {n} "
                                     "arguments; give one per argument (None: not batched)")
                axes += part
            else:
                axes += [part] * n
        axes = axes[:n] + [None if t is None else ax for t, ax in zip(tangents, axes[n:])]
        return primals + tangents, tuple(axes)

    def _call(self, args: tuple, axes: tuple) -> object:
        name = self.__name__
        size = None
        batches: list[object] = []
        for k, (a, ax) in enumerate(zip(args, axes)):
            if ax is None:
                batches.append(a)
                continue
            if not isinstance(a, np.ndarray):
                raise ValueError(f"{name}: in_axes {ax} for argument {k}, a {type(a).__name__}: only "
                                 "arrays have a batch axis (give None for an argument that is the same "
                                 "for every element)")
            if not -a.ndim <= ax < a.ndim:
                raise ValueError(f"{name}: in_axes {ax} for argument {k} is out of range: the array has "
                                 f"{a.ndim} dimension{'s' if a.ndim != 1 else ''} (shape {a.shape})")
            ax = int(ax) % a.ndim
            moved = np.moveaxis(a, ax, 0) if ax else a
            if size is None:
                size = moved.shape[0]
            elif moved.shape[0] != size:
                sizes = ", ".join(f"argument {j}: {np.shape(b)[int(x) % np.ndim(b)]}"
                                  for j, (b, x) in enumerate(zip(args, axes)) if x is not None)
                raise ValueError(f"{name}: the batched arguments have different sizes along their "
                                 f"in_axes ({sizes}); every batched axis must have the same size")
            batches.append(moved)
        if size is None:
            raise ValueError(f"{name}: no argument is batched (in_axes {self.in_axes!r}); give the "
                             "batch axis of at least one array")
        arrays = [a for a in args if isinstance(a, np.ndarray)]
        if len(arrays) > 1 and shadows.arrays_overlap(*arrays):
            raise ValueError(f"{name}: arrays passed share memory; vmap needs distinct arrays "
                             "(pass copies)")
        batched = tuple(ax is not None for ax in axes)
        contiguous = [np.ascontiguousarray(b) if on else b for b, on in zip(batches, batched)]
        if self._by_shape is None:
            self._by_shape = _keyed_by_shape(self.inner)
        key = (batched, _signature(contiguous, batched),
               _shapes_key(contiguous, batched) if self._by_shape else ())
        plan = self._plans.get(key)
        if plan is None:
            from adpasses.core.compile_locks import once

            examples = tuple(_example(b) if on else b for b, on in zip(contiguous, batched))
            plan = once(self._plans, key, lambda: self._compile(examples, batched))
        if not self._by_shape and shadows.dispatch_ready():
            code = shadows.signature_code(*args)
            if code and code not in self._fast:
                self._fast.add(code)
                fast = _fast_path(self, plan, args, axes)
                if fast is not None:
                    from adpasses.api.gradcall import install_dispatch

                    install_dispatch(self, self._slow_call).add(code, fast)
        return plan.run(size, batches, contiguous, self.out_axes, name)

    def _compile(self, examples: tuple, batched: tuple[bool, ...]) -> _Plan:
        from adpasses.api.functions import _private, function_named
        from adpasses.native.llvm_jit import compile_module, stats
        from adpasses.transforms.batch_loops import BATCHED, CONST as D_CONST, LOCAL, RESTORE, RESTORE_ROWS, \
            SCRATCH, SCRATCH_ROWS, SHARED, ZEROED
        from adpasses.transforms.batch_loops import BatchSpec, add_batch_driver, stored_result_types

        jf = getattr(self.inner, "jf", self.inner)
        kernel = _kernel(self.inner, examples)
        kinds = []
        for p in kernel.params:
            if p.kind == CONST:
                kinds.append(D_CONST)
            elif p.kind in (ARG, PRISTINE):
                kinds.append(BATCHED if batched[p.arg] else SHARED)
            # parallel: a buffer every element writes (a restored copy, a
            # scratch) is one row per element, so that elements are independent.
            elif p.kind == COPY:
                kinds.append(BATCHED if batched[p.arg] else (RESTORE_ROWS if self.parallel else RESTORE))
            elif p.kind == ZEROS:
                # parallel: an output (a gradient) is zeroed by the driver, on the pool.
                kinds.append((ZEROED if self.parallel else BATCHED) if p.out is not None
                             else (SCRATCH_ROWS if self.parallel else SCRATCH))
            elif p.kind == BUFFER:
                kinds.append(LOCAL if kernel.static_shapes and _stack_sized(kernel, examples) else SHARED)
            else:
                kinds.append(BATCHED)
        module = kernel.module
        entry = function_named(module, kernel.entry)
        if kernel.results is None:  # every result dropped
            kernel.results = [None] * len(entry.function_type.outputs.data)
        shapes = tuple(_param_shape(p, examples) for p in kernel.params) if kernel.static_shapes else ()
        spec = BatchSpec(tuple(kinds), tuple(r is not None for r in kernel.results),
                         tuple((i, p.value) for i, p in enumerate(kernel.params) if p.kind == CONST),
                         shapes, noalias=True, parallel=self.parallel)
        # Only the driver has a Python entry: every other function is private,
        # so LLVM inlines a function called once into its caller (the
        # per-element function into the loop, a tangent function into a
        # Hessian's driver) and optimises the element's code as one body.
        from xdsl.dialects import func

        for op in module.ops:  # type: ignore[attr-defined]
            if isinstance(op, func.FuncOp) and op.body.blocks:
                op.sym_visibility = _private()
        driver_name = f"{kernel.entry}_batched"
        driver = add_batch_driver(module, entry, spec, driver_name)
        if self.parallel:
            from adpasses.api.parallel_loops import parallel_loops

            self.parallel_loops = parallel_loops("vmap", driver)
        result_dtypes = [_numpy_dtype(t) for t in stored_result_types(entry, spec)]
        before = stats["compiled"]
        compiled = compile_module(module, boundscheck=jf.boundscheck, fastmath=jf.fastmath)
        jf._compiled(kernel.record, compiled, before)
        return _Plan(compiled[driver_name], compiled, kernel, kinds, batched, result_dtypes)


STACK_BUFFER_BYTES = 16 * 1024
"""The most a driver's buffers (a Hessian's lanes and shadows) take on the
stack, all together; larger ones are arrays vmap allocates per call."""

LOCAL_KIND = "local"  # transforms.batch_loops.LOCAL, without importing the compiler
RESTORE_ROWS_KIND, SCRATCH_ROWS_KIND = "restore_rows", "scratch_rows"  # and its RESTORE_ROWS, SCRATCH_ROWS
RESTORE_KIND = "restore"  # and its RESTORE (run() is per call: no import there)
ZEROED_KIND = "zeroed"  # and its ZEROED


def _stack_sized(kernel: _Kernel, examples: tuple) -> bool:
    """Whether the kernel's buffers fit on the driver's stack."""
    total = sum(int(np.prod(examples[p.arg].shape)) * examples[p.arg].dtype.itemsize
                for p in kernel.params if p.kind == BUFFER)
    return total <= STACK_BUFFER_BYTES


def _keyed_by_shape(inner: object) -> bool:
    """Whether plans of `inner` are compiled for the element shapes: a
    Hessian's (its driver is specialised on them, `_Kernel.static_shapes`);
    other kinds have one plan for every shape."""
    from adpasses.api.forward import SweepCallable

    return isinstance(inner, SweepCallable)


def _shapes_key(batches: Sequence[object], batched: tuple[bool, ...]) -> tuple:
    """The element shapes a plan is compiled for (`_keyed_by_shape`)."""
    return tuple(_element_shape(b, on) if isinstance(b, np.ndarray) else None
                 for b, on in zip(batches, batched))


def _param_shape(p: _Param, examples: tuple) -> tuple[int, ...] | None:
    """The element shape of a driver parameter, for a kernel compiled for
    its examples' shapes."""
    if p.kind == OUT:
        return tuple(np.shape(examples[k])[d] for k, d in p.shape)
    if p.kind in (ARG, PRISTINE, COPY, BUFFER) and isinstance(examples[p.arg], np.ndarray):
        return examples[p.arg].shape
    return None


def _signature(batches: Sequence[object], batched: tuple[bool, ...]) -> tuple:
    global _signature_key
    if _signature_key is None:  # (an import statement per call costs about a microsecond)
        from adpasses.frontend.signature import signature_key

        _signature_key = signature_key
    return tuple((b.dtype.char, b.ndim) if on else _signature_key((b,))[0]  # type: ignore[union-attr]
                 for b, on in zip(batches, batched))


_signature_key: Callable | None = None


def _example(batch: np.ndarray) -> object:
    """Element 0 of a batch (zeros of its shape for an empty batch): an
    array, or a Python scalar for a 1-D batch."""
    e = batch[0] if len(batch) else np.zeros(batch.shape[1:], batch.dtype)
    return e.item() if batch.ndim == 1 else e


def _numpy_dtype(t: object) -> np.dtype:
    """The dtype of a result of type `t` (the one the entry callers use)."""
    from adpasses.native.callers import numpy_dtype

    try:
        return numpy_dtype(t)
    except TypeError:
        raise TypeError(f"vmap: a result of type {t} cannot be batched") from None


_SCALAR_STORAGE = {"f": np.float64, "i": np.int64, "u": np.int64, "b": np.bool_}


@dataclass
class _Plan:
    """A compiled driver and how to feed it."""

    call: Callable
    compiled: object  # the CompiledModule: `call`'s machine code lives as long as it
    kernel: _Kernel
    kinds: list[str]           # per parameter: the driver's kind (transforms/batch_loops)
    batched: tuple[bool, ...]  # per argument
    result_dtypes: list[np.dtype]

    def __post_init__(self) -> None:
        # Whether some parameter takes per-element rows (a call may then be sliced: _rows_step).
        self.rows = any(kind in (RESTORE_ROWS_KIND, SCRATCH_ROWS_KIND) and p.out is None
                        for p, kind in zip(self.kernel.params, self.kinds))

    def run(self, size: int, batches: list, contiguous: list, out_axes: object, name: str) -> object:
        kernel, batched = self.kernel, self.batched
        for k in kernel.written:
            from adpasses.api.aliasing import internal_overlap

            # Each element writes its row of a batched array: rows sharing memory (a stride of 0,
            # overlapping strides) would be written back over one another (last row wins), where a
            # Python loop over the elements accumulates: silently different numbers.
            # (an unbatched one is copied for each element: the copy's elements would be distinct)
            if isinstance(batches[k], np.ndarray) and internal_overlap(batches[k]):
                raise ValueError(f"{name}: argument {k} is written by the function, and its elements share "
                                 "memory (a stride of 0, as np.lib.stride_tricks.as_strided or "
                                 "np.broadcast_to give, or overlapping strides): the batch elements would "
                                 "write one another's memory; pass a copy (np.array(x)) with distinct rows")
        outs: list[object] = [None] * kernel.n_outputs
        # Per driver argument after the size: the array, and whether it has
        # the batch axis (a slice of the batch gets its rows).
        driver_args: list[tuple[object, bool]] = []
        copies: dict[int, np.ndarray] = {}
        step = self._rows_step(size, contiguous)
        for p, kind in zip(kernel.params, self.kinds):
            if p.kind == CONST or kind == LOCAL_KIND:
                continue
            if p.kind in (ARG, PRISTINE):
                a = contiguous[p.arg]
                if batched[p.arg] and a.ndim == 1:  # a scalar per element, read from its storage type
                    a = np.ascontiguousarray(a, _SCALAR_STORAGE[a.dtype.kind])
                driver_args.append((a, batched[p.arg]))
            elif p.kind == BUFFER:
                like = contiguous[p.arg]
                driver_args.append((np.empty(_element_shape(like, batched[p.arg]), like.dtype), False))
            elif p.kind == COPY:
                if kind == RESTORE_ROWS_KIND:  # each element's copy: a row, copied from the pristine in the loop
                    like = contiguous[p.arg]
                    driver_args += [(np.empty((step,) + like.shape, like.dtype), False), (like, False)]
                    continue
                if p.arg not in copies:
                    copies[p.arg] = np.array(contiguous[p.arg], order="C")
                if kind == RESTORE_KIND:
                    driver_args += [(copies[p.arg], False), (contiguous[p.arg], False)]
                else:
                    driver_args.append((copies[p.arg], True))
            elif p.kind == ZEROS:
                like = contiguous[p.arg]
                shape = like.shape[1:] if batched[p.arg] else like.shape
                if kind == SCRATCH_ROWS_KIND:  # each element's scratch: a row, zeroed in the loop
                    driver_args.append((np.empty((step,) + shape, like.dtype), False))
                elif p.out is None:
                    driver_args.append((np.zeros(shape, like.dtype), False))
                else:  # zero-filled here, or by the driver (ZEROED: on the pool)
                    outs[p.out] = batch_output((size,) + shape, like.dtype, zeroed=kind != ZEROED_KIND)
                    driver_args.append((outs[p.out], True))
            else:  # OUT: per-element shape from the arguments' (p.shape: (argument, axis) pairs)
                shape = tuple(_element_shape(contiguous[k], batched[k])[d] for k, d in p.shape)  # type: ignore[misc]
                outs[p.out] = batch_output((size,) + shape, p.dtype)  # type: ignore[index, arg-type]
                driver_args.append((outs[p.out], True))  # type: ignore[index]
        for r, dtype in zip((r for r in kernel.results if r is not None), self.result_dtypes):
            outs[r] = np.empty(size, dtype)
            driver_args.append((outs[r], True))
        if step >= size:
            self.call(size, *(a for a, _ in driver_args))
        else:  # the per-element rows of at most ROWS_BYTES: the batch in slices of `step` elements
            for lo in range(0, size, step):
                hi = min(size, lo + step)
                self.call(hi - lo, *(a[lo:hi] if on else a for a, on in driver_args))  # type: ignore[index]
        # A jitted f writes its array arguments in place: writes into a batch
        # vmap had to copy (moved or not C-contiguous) reach the caller's.
        for k in kernel.written:
            if batched[k] and contiguous[k] is not batches[k]:
                batches[k][...] = contiguous[k]
        return kernel.assemble(_place(outs, out_axes, name))

    def _rows_step(self, size: int, contiguous: list) -> int:
        """Elements per driver call: all of them, unless the per-element
        rows (RESTORE_ROWS, SCRATCH_ROWS: a parallel batch's restored
        copies and scratch) of the whole batch would take more than
        ROWS_BYTES; then as many as fit (at least one)."""
        if not self.rows:
            return max(size, 1)
        per_element = 0
        for p, kind in zip(self.kernel.params, self.kinds):
            if kind in (RESTORE_ROWS_KIND, SCRATCH_ROWS_KIND):
                like = contiguous[p.arg]
                per_element += math.prod(_element_shape(like, self.batched[p.arg])) * like.dtype.itemsize
        if per_element == 0 or size * per_element <= ROWS_BYTES:
            return max(size, 1)
        return max(1, ROWS_BYTES // per_element)


def _fast_path(mapped: VmapCallable, plan: _Plan, args: tuple, axes: tuple) -> Callable | None:
    """A Python function for calls with the signature code of `args` (the
    dtype, rank and C-contiguity of every array; the types of the others):
    the driver's arguments built with no loop over parameters, or None
    where the general path is needed anyway (a batch axis other than 0, a
    batch vmap must copy, a function writing its arguments, per-element
    rows, scratch, out_axes other than 0). A call whose batched sizes
    differ or whose arrays overlap takes the general path (its errors)."""
    kernel = plan.kernel
    if isinstance(mapped.inner, JvpOf) or kernel.written or plan.rows or not (
            mapped.out_axes == 0 and mapped.out_axes.__class__ is int):
        return None
    if any(ax not in (None, 0) or ax.__class__ not in (int, type(None)) for ax in axes):
        return None
    params = [f"a{k}" for k in range(len(args))]
    batched = [p for p, ax in zip(params, axes) if ax is not None]
    for a, ax in zip(args, axes):
        if ax is not None and not (isinstance(a, np.ndarray) and a.flags.c_contiguous and a.ndim >= 1):
            return None
        if ax is not None and a.ndim == 1 and a.dtype != np.dtype(_SCALAR_STORAGE[a.dtype.kind]):
            return None  # (read from its storage type: a conversion)
    env: dict[str, object] = {"call": plan.call, "overlap": shadows.arrays_overlap, "slow": mapped._slow_call,
                              "output": batch_output, "empty": np.empty, "assemble": kernel.assemble}
    slow = f"return slow({', '.join(params)})"
    lines = [f"def fast({', '.join(params)}):", f"    size = {batched[0]}.shape[0]"]
    lines += [f"    if {b}.shape[0] != size: {slow}" for b in batched[1:]]
    arrays = [p for p, a in zip(params, args) if isinstance(a, np.ndarray)]
    if len(arrays) > 1:
        lines.append(f"    if overlap({', '.join(arrays)}): {slow}")
    call_args, outs = ["size"], [None] * kernel.n_outputs
    for p, kind in zip(kernel.params, plan.kinds):
        if p.kind == CONST or kind == LOCAL_KIND:
            continue
        if p.kind in (ARG, PRISTINE):
            call_args.append(params[p.arg])
        elif p.kind == ZEROS and p.out is not None and axes[p.arg] is not None:
            env[f"dt{p.out}"] = args[p.arg].dtype  # type: ignore[union-attr]
            lines.append(f"    o{p.out} = output((size,) + {params[p.arg]}.shape[1:], dt{p.out}, "
                         f"{kind != ZEROED_KIND})")
            call_args.append(f"o{p.out}")
            outs[p.out] = f"o{p.out}"  # type: ignore[call-overload]
        elif p.kind == ZEROS and p.out is not None:
            env[f"dt{p.out}"] = args[p.arg].dtype  # type: ignore[union-attr]
            lines.append(f"    o{p.out} = output((size,) + {params[p.arg]}.shape, dt{p.out}, "
                         f"{kind != ZEROED_KIND})")
            call_args.append(f"o{p.out}")
            outs[p.out] = f"o{p.out}"  # type: ignore[call-overload]
        else:
            return None
    for r, dtype in zip((r for r in kernel.results if r is not None), plan.result_dtypes):
        env[f"rt{r}"] = dtype
        lines.append(f"    o{r} = empty(size, rt{r})")
        call_args.append(f"o{r}")
        outs[r] = f"o{r}"  # type: ignore[call-overload]
    if any(o is None for o in outs):
        return None
    lines += [f"    call({', '.join(call_args)})", f"    return assemble([{', '.join(outs)}])"]  # type: ignore[arg-type]
    exec(compile("\n".join(lines) + "\n", f"<adpasses {mapped.__name__} fast path>", "exec"), env)
    return env["fast"]  # type: ignore[return-value]


ROWS_BYTES = 64 << 20
"""The most memory a parallel batch's per-element copies and scratch rows
take at once (`_Plan.run` runs a larger batch in slices that fit)."""


LARGE_OUTPUT_BYTES = 64 << 20
"""Outputs from this size on are mapped with small pages (`batch_output`)."""


def batch_output(shape: tuple[int, ...], dtype: object, zeroed: bool = True) -> np.ndarray:
    """A C-contiguous array for a batched output: zero-filled (`zeroed`;
    else of any contents, for an output the driver zero-fills itself on
    the pool, ZEROED, below LARGE_OUTPUT_BYTES). From
    LARGE_OUTPUT_BYTES on, an anonymous mapping of its own (small pages)
    rather than numpy's allocation: numpy asks the kernel for transparent
    huge pages on large arrays, and where memory is fragmented each huge
    page fault stalls for direct compaction (writing 10^6 Hessians, 648 MB:
    56-170 ms with huge pages, up to 1.4 s when compacting; 300 ms steady
    with small pages, on the 2-core benchmark machine). The mapping is
    freed with the array."""
    dtype = np.dtype(dtype)
    nbytes = math.prod(shape) * dtype.itemsize  # (np.prod of a tuple: microseconds per call)
    if nbytes < LARGE_OUTPUT_BYTES or not hasattr(mmap, "MAP_ANONYMOUS"):
        return np.zeros(shape, dtype) if zeroed else np.empty(shape, dtype)
    mapping = mmap.mmap(-1, nbytes, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    return np.frombuffer(mapping, dtype).reshape(shape)


def _element_shape(a: np.ndarray, batched: bool) -> tuple[int, ...]:
    return a.shape[1:] if batched else a.shape


def _place(outs: list, out_axes: object, name: str) -> list:
    """Each output with its batch axis moved from 0 to its out_axes."""
    if out_axes == 0 and out_axes.__class__ is int:  # the default: every output as it is
        return outs
    if isinstance(out_axes, tuple):
        if len(out_axes) != len(outs):
            raise ValueError(f"{name}: out_axes has {len(out_axes)} entries but there are {len(outs)} "
                             "results; give one per result (or one int for all)")
        axes = out_axes
    else:
        axes = (out_axes,) * len(outs)
    placed = []
    for j, (o, ax) in enumerate(zip(outs, axes)):
        if not -o.ndim <= ax < o.ndim:
            raise ValueError(f"{name}: out_axes {ax} is out of range for result {j}, which has "
                             f"{o.ndim} dimension{'s' if o.ndim != 1 else ''} with the batch axis")
        placed.append(o if int(ax) % o.ndim == 0 else np.moveaxis(o, 0, int(ax)))
    return placed


# -- the per-element function of each kind of f ------------------------------------------


def _kernel(inner: object, examples: tuple) -> _Kernel:
    from adpasses.api.forward import HvpCallable, SweepCallable
    from adpasses.api.gradcall import GradCallable

    if isinstance(inner, JvpOf):
        return _jvp_kernel(inner, examples)
    if isinstance(inner, HvpCallable):
        return _hvp_kernel(inner, examples)
    jf = getattr(inner, "jf", inner)
    values = _checked(jf, examples)
    if isinstance(inner, GradCallable):
        return _grad_kernel(inner, values)
    if isinstance(inner, SweepCallable):
        return _sweep_kernel(inner, values)
    return _primal_kernel(inner, values)


def _checked(jf, examples: tuple) -> tuple:  # type: ignore[no-untyped-def]
    """One element's arguments, numpy scalars converted and types checked
    (TypeError naming a bad argument)."""
    values = plain_arguments(jf.__name__, jf._params, jf.bind(tuple(examples)))
    jf.arg_types(values)
    return values


def _one_or_tuple(n: int) -> Callable[[list], object]:
    if n == 0:
        return lambda outs: None
    if n == 1:
        return lambda outs: outs[0]
    return tuple


def _built(jf, values: tuple, kind: str, activity: tuple[str, ...]) -> tuple:  # type: ignore[no-untyped-def]
    """f's module for one element's arguments, and its compile record."""
    from adpasses.frontend.signature import signature_key

    record = jf._record(kind, values, activity)
    module, name = jf.build(values, noalias=True)  # vmap's arrays never overlap (checked per call)
    record.stages["frontend"] = jf._frontend_s.pop(signature_key(values), 0.0)
    return module, name, record


def _primal_kernel(jf, values: tuple) -> _Kernel:  # type: ignore[no-untyped-def]
    kinds = jf.result_kinds(values)
    if any(k != "float" for k in kinds):
        what = ("an array" if "array" in kinds else "an int or bool") if len(kinds) == 1 else \
            f"a tuple of {', '.join(kinds)}"
        raise TypeError(f"vmap({jf.__name__}): {jf.__name__}() returns {what}; vmap maps functions "
                        "returning floats (or a tuple of floats, or nothing): write an array result "
                        "into an array argument batched with the others, vmap(f)(x, out)")
    module, name, record = _built(jf, values, "vmap primal", ())
    params = [_Param(ARG, k) for k in range(len(values))]
    return _Kernel(module, name, record, params, list(range(len(kinds))), len(kinds),
                   _one_or_tuple(len(kinds)), tuple(sorted(jf.written_arrays(values))))


def _grad_kernel(gc, values: tuple) -> _Kernel:  # type: ignore[no-untyped-def]
    from adpasses.api.functions import _private, function_named
    from adpasses.transforms.reverse_pass import differentiate

    jf, with_value = gc.jf, gc.with_value
    plan = gc.plan(values)
    ret = jf.scalar_return(values)  # TypeError unless f returns a float
    out_of = {k: i + int(with_value) for i, k in enumerate(plan.nums)}
    params: list[_Param] = []
    for k, act in enumerate(plan.activity):
        # grad leaves its arguments unchanged: the arrays f writes are copies.
        params.append(_Param(COPY if k in plan.written else ARG, k))
        if act in ("dup", "dupnoneed"):
            params.append(_Param(ZEROS, k, out_of.get(k)))  # the shadow: a derivative, or scratch
    params.append(_Param(CONST, value=1.0))  # the seed
    results = ([0] if with_value else []) + [out_of[k] for k, act in enumerate(plan.activity)
                                             if act == "active"]
    module, name, record = _built(jf, values, "vmap gradient", plan.activity)
    g = differentiate(module, name, list(plan.activity), list(ret), with_primal=with_value,
                      options=jf.reverse_options(), timings=record.stages)
    function_named(module, name).sym_visibility = _private()
    first = int(with_value)

    def assemble(outs: list) -> object:
        grads = outs[first:]
        result = grads[0] if gc.single else tuple(grads)
        return (outs[0], result) if with_value else result
    return _Kernel(module, g.name, record, params, results, len(plan.nums) + first, assemble)


def _sweep_kernel(sc, values: tuple) -> _Kernel:  # type: ignore[no-untyped-def]
    from adpasses.api.forward import MAX_WIDTH, _array_argnums, _float_result, hessian_module
    from adpasses.api.gradcall import normalize_argnums

    jf, api = sc.jf, f"vmap({sc.__name__})"
    if sc.kind != "hessian":
        raise TypeError(f"{api}: vmap maps grad, value_and_grad and hessian; for the Jacobian of a "
                        f"float-valued function per element use vmap(grad({jf.__name__}))")
    nums = normalize_argnums(sc.argnums, len(values), jf.__name__)
    _array_argnums(jf, values, nums, api)
    _float_result(jf, values, api, "the Hessian is that of a float-valued function")
    n_max = max(values[k].size for k in nums)
    width = sc.width or max(1, min(n_max, MAX_WIDTH))
    module, entry, record, inputs, written, blocks, scratch = hessian_module(jf, values, nums, width)
    params = ([_Param(COPY if k in written else ARG, k) for k in inputs]
              + [_Param(PRISTINE, k) for k in written])
    for i, (a, b) in enumerate(blocks):
        shape = tuple((a, d) for d in range(values[a].ndim)) + tuple((b, d) for d in range(values[b].ndim))
        params.append(_Param(OUT, out=i, shape=shape, dtype=values[b].dtype))
    # The driver's lanes and shadows: allocated once per vmap call, not per element.
    params += [_Param(BUFFER, k) for k in scratch]
    m = len(nums)

    def assemble(outs: list) -> object:
        if sc.single:
            return outs[0]
        return tuple(tuple(outs[i * m + j] for j in range(m)) for i in range(m))
    return _Kernel(module, entry, record, params, [], len(blocks), assemble, static_shapes=True)


def _jvp_kernel(jv: JvpOf, examples: tuple) -> _Kernel:
    from adpasses.api.forward import _float_result, _tangent_activity, tangent_module

    jf, api = jv.jf, f"vmap({jv.__name__})"
    n = len(examples) // 2
    values = _checked(jf, examples[:n])
    if len(values) != n:
        raise TypeError(f"{api}: give every argument of {jf.__name__}() among the primals "
                        f"({len(values)} parameters, {n} primals)")
    tangents = tuple(float(t) if isinstance(values[k], float) and t is not None else t
                     for k, t in enumerate(examples[n:]))
    _float_result(jf, values, api, "for a function writing an output array use adpasses.fwddiff")
    activity, written = _tangent_activity(jf, values, tangents, api)
    params: list[_Param] = []
    for k, act in enumerate(activity):
        # jvp leaves its arguments unchanged: the arrays f writes (and their tangents) are copies.
        params.append(_Param(COPY if k in written else ARG, k))
        if act == "dup":
            if tangents[k] is None:  # a written float array's tangent: zero for every element
                params.append(_Param(ZEROS, k))
            else:
                params.append(_Param(COPY if k in written else ARG, n + k))
    module, entry, _, record = tangent_module(jf, values, tuple(activity), ("dup",), 1, "vmap jvp")
    return _Kernel(module, entry, record, params, [0, 1], 2, tuple)


def _hvp_kernel(hc, examples: tuple) -> _Kernel:  # type: ignore[no-untyped-def]
    from adpasses.api.forward import _GradientLayout, _array_argnums, _float_result, tangent_module
    from adpasses.api.gradcall import normalize_argnums

    jf, api = hc.jf, f"vmap({hc.__name__})"
    if not examples:
        raise TypeError(f"{api}: call it as vmap(hvp(f))(*args, v)")
    values = _checked(jf, examples[:-1])
    v = examples[-1]
    n = len(values)
    (k,) = normalize_argnums(hc.argnums, n, jf.__name__)
    _array_argnums(jf, values, (k,), api)
    _float_result(jf, values, api, "the Hessian is that of a float-valued function")
    x = values[k]
    if not isinstance(v, np.ndarray) or v.shape != x.shape or v.dtype != x.dtype:
        what = f"shape {v.shape} and dtype {v.dtype}" if isinstance(v, np.ndarray) else type(v).__name__
        raise ValueError(f"{api}: each element's v has {what}; it must be an array of argument {k}'s "
                         f"shape {x.shape} and dtype {x.dtype}")
    layout = _GradientLayout.of(jf, values, (k,))
    params: list[_Param] = []
    for j in range(n):
        params.append(_Param(COPY if j in layout.written else ARG, j))
        if layout.fwd_activity[layout.value_at[j]] == "dup":
            if j == k:  # the direction; a written array's tangent is updated in place: a copy
                params.append(_Param(COPY if j in layout.written else ARG, n))
            else:
                params.append(_Param(ZEROS, j))
        if layout.shadow_at[j] is not None:
            params += [_Param(ZEROS, j), _Param(ZEROS, j, 0 if j == k else None)]  # shadow, its tangent
    params.append(_Param(CONST, value=1.0))  # the gradient's seed
    module, entry, _, record = tangent_module(jf, values, layout.fwd_activity, (), 1, "vmap hvp",
                                              over_gradient=(layout.grad_activity, layout.ret))
    return _Kernel(module, entry, record, params, None, 1, lambda outs: outs[0])
