"""`grad(f)` and `value_and_grad(f)` as callables, with a fast path.

A call is planned once per argument signature (`GradPlan`: each
argument's activity, which arrays the function writes). The gradient is
compiled per plan and aliasing case: when no two arrays of the call share
memory that f writes, the variant whose memref arguments carry
`ad.noalias`; otherwise the conservative one. `grad` leaves its arguments
unchanged: the arrays f writes are copied, and arrays sharing memory with
them are copied together (`aliasing.grad_call`, which also decides the
shadows and the errors of aliased calls).

Once the no-alias variant of a signature exists, calls with that signature
go through a Python function generated for it (`_fast_path`): one overlap
check, a copy per written array, one `np.zeros` per shadow, one call of
the compiled entry, and the result tuple, with no loop or dictionary work
in between. The no-alias variant copies the written arrays it can itself
(`ad-private-copies`: rank 1, contiguous), in its first loop, and
zero-fills their shadows there (`LoadedGradient.private`): for those the
fast path passes the caller's array and an `np.empty` shadow.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from adpasses.api import shadows
from adpasses.api.aliasing import grad_call, internal_overlap
from adpasses.core.parallel import SERIAL_ZERO_FILL_BYTES
from adpasses.native.arguments import plain_arguments
from adpasses.core.diagnostics import CompileError, for_user


@dataclass
class LoadedGradient:
    """One compiled gradient function and what `differentiate` reported."""

    call: Callable
    activity: tuple[str, ...]
    ret: tuple[str, ...]
    with_primal: bool
    report: object
    gradient_name: str
    module: object
    activity_text: str
    compiled: object  # the CompiledModule: `call`'s machine code lives as long as it
    private: frozenset[int] = frozenset()
    """Written arrays the compiled gradient copies itself (its callers pass
    them uncopied) and whose shadows it zero-fills (callers pass np.empty):
    `ad-private-copies`."""
    zeroed: frozenset[int] = frozenset()
    """Other differentiated arrays whose shadows the compiled gradient zeroes
    itself (callers pass np.empty): a gradient with a loop, on the worker
    pool when it runs parallel loops, else with the GIL released
    (`private_copies.zero_shadows_inside`)."""


def normalize_argnums(argnums: int | Sequence[int], n: int, name: str) -> tuple[int, ...]:
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    for k in nums:
        if not isinstance(k, int) or not -n <= k < n:
            raise ValueError(f"argnums {k!r} is out of range for {name}() with {n} arguments")
    return tuple(k % n for k in nums)


@dataclass
class GradPlan:
    """What calls with one argument signature need, computed once."""

    activity: tuple[str, ...]
    nums: tuple[int, ...]
    n_arrays: int
    written: set[int]
    variants: dict[bool, LoadedGradient] = field(default_factory=dict)


def grad_activity(jf, args: Sequence[object], nums: tuple[int, ...]) -> tuple[tuple[str, ...], set[int]]:  # type: ignore[no-untyped-def]
    """Activities for grad(f, argnums): differentiated floats are active,
    differentiated arrays dup, the rest const, except float arrays the
    function writes (outputs, scratch): they get a throwaway shadow, since
    derivatives may flow through their memory."""
    name = jf.__name__
    activity = []
    for k, a in enumerate(args):
        if k not in nums:
            activity.append("const")
        elif isinstance(a, np.ndarray):
            if a.dtype.kind != "f":
                raise TypeError(f"{name}(): argument {k} is an array of {a.dtype} and cannot be "
                                "differentiated: only floats and float arrays can")
            activity.append("dup")
        elif isinstance(a, (float, np.floating)):
            activity.append("active")
        else:
            raise TypeError(f"{name}(): argument {k} ({type(a).__name__}) cannot be differentiated: "
                            "only floats and float arrays can")
    written = jf.written_arrays(args)
    for k in written:
        if activity[k] == "const" and args[k].dtype.kind == "f":
            activity[k] = "dup"
    return tuple(activity), written


class GradCallable:
    """The callable `grad(f, argnums)` / `value_and_grad(f, argnums)` returns."""

    # Called in compiled code: the request `grad(f, argnums)(...)` (frontend/derivative_calls.py).
    __adpasses_intrinsic__ = "derivative object"

    @property
    def derivative_kind(self) -> str:
        return "value_and_grad" if self.with_value else "grad"

    def __init__(self, jf, argnums: int | Sequence[int], with_value: bool):  # type: ignore[no-untyped-def]
        self.jf = jf
        self.argnums = argnums
        self.with_value = with_value
        self.single = isinstance(argnums, int)
        self.__name__ = f"{'value_and_grad' if with_value else 'grad'}({jf.__name__})"
        self.__wrapped__ = jf.py_func
        self._plans: dict[int, GradPlan] = {}
        self._fast: dict[int, Callable] = {}  # signature code -> generated fast path
        self._dispatch = None

    def __repr__(self) -> str:
        return f"<adpasses.{self.__name__}>"

    def __reduce__(self) -> tuple:
        """Pickled by reference: the function's reference (see
        JitFunction.__reduce__), argnums and whether the value is returned."""
        return (rebuild_grad, (self.jf, self.argnums, self.with_value))

    def __call__(self, *args: object, **kwargs: object) -> object:
        # Replaced by a dispatch builtin once a fast path exists (see
        # install_dispatch); this method is its fallback, and the path of
        # calls with keywords or omitted defaults (argnums then count every
        # parameter in the function's order).
        try:
            return self.slow_call(self.jf.bind(args, kwargs))
        except CompileError as err:
            raise for_user(err)  # the user's line and the message, not the compiler's frames

    def _slow_call_varargs(self, *args: object, **kwargs: object) -> object:
        try:
            return self.slow_call(self.jf.bind(args, kwargs))
        except CompileError as err:
            raise for_user(err)  # the user's line and the message, not the compiler's frames

    def plan(self, args: tuple) -> GradPlan:
        # In a fresh process the signature code is asked for after planning:
        # the dispatch builtins that compute it are then compiled on another
        # thread while planning imports the compiler (JitFunction.build).
        code = shadows.signature_code(*args) if shadows.dispatch_ready() else None
        plan = self._plans.get(code) if code else None
        if plan is None:
            self.jf.arg_types(args)  # TypeError naming a bad argument
            nums = normalize_argnums(self.argnums, len(args), self.jf.__name__)
            activity, written = grad_activity(self.jf, args, nums)
            n_arrays = sum(isinstance(a, np.ndarray) for a in args)
            plan = GradPlan(activity, nums, n_arrays, written)
            if code is None:
                code = shadows.signature_code(*args)
            if code:
                self._plans[code] = plan
        return plan

    def slow_call(self, args: tuple) -> object:
        """Any call: plans, compiles what is missing, handles aliasing
        (adpasses.api.aliasing.grad_call: copies of what f writes, shadows of
        memory shared with written arrays)."""
        jf = self.jf
        # The fast path is found by the caller's own arguments' code: numpy
        # scalars have codes of their own (jit specialises on them), while
        # the gradient takes them as the Python numbers of their kind.
        given = args
        args = aligned(plain_arguments(jf.__name__, jf._params, args))
        plan = self.plan(args)
        call = grad_call(jf.__name__, jf._params, args, plan.activity, plan.written)
        # Compiled for the caller's layouts: copies of written arrays are
        # contiguous, which every layout the plan allows accepts.
        if call.activity == plan.activity:
            g = plan.variants.get(call.noalias)
            if g is None:
                # Without aliasing, the gradient copies what f writes itself.
                private = frozenset(plan.written) if call.noalias else frozenset()
                g = plan.variants[call.noalias] = jf.gradient(args, plan.activity, self.with_value, call.noalias,
                                                              private=private, zero=call.noalias)
        else:  # members of a written group that argnums leaves out are differentiated too
            g = jf.gradient(args, call.activity, self.with_value, call.noalias)
        code = shadows.signature_code(*given) if all(a is b for a, b in zip(given, args) if
                                                     isinstance(a, np.ndarray)) else 0
        if call.noalias and code and code not in self._fast:
            self._fast[code] = _fast_path(self, plan, g, args)
            install_dispatch(self, self._slow_call_varargs).add(code, self._fast[code])
        call_args: list[object] = []
        for k, a in enumerate(call.args):
            call_args.append(a)
            if k in call.shadows:
                call_args.append(call.shadows[k])
        call_args.append(1.0)
        out = g.call(*call_args)
        outs = list(out) if isinstance(out, tuple) else [out]
        value = outs.pop(0) if self.with_value else None
        derivative = dict(zip((k for k, act in enumerate(call.activity) if act == "active"), outs))
        # Shadows of shared memory are views of one buffer: hand out copies.
        grads = [np.array(call.shadows[k], order="C") if k in call.grouped
                 else call.shadows[k] if k in call.shadows else derivative[k] for k in plan.nums]
        result = grads[0] if self.single else tuple(grads)
        return (value, result) if self.with_value else result


def aligned(args: tuple) -> tuple:
    """`args` with each misaligned array (its data not on a multiple of its
    element size, as arrays unpickled from a byte stream can be) replaced by
    an aligned copy, when no two arrays share memory: grad reads its
    arguments and leaves them unchanged, so a copy gives the same
    derivatives; compiled code needs aligned data."""
    if any(isinstance(a, np.ndarray) and not a.flags.aligned for a in args):
        # Arrays sharing memory are left as they are: how grad treats them
        # (or which error it raises) depends on that sharing (aliasing.py).
        if not shadows.arrays_overlap(*args):
            return tuple(np.array(a) if isinstance(a, np.ndarray) and not a.flags.aligned else a
                         for a in args)
    return args


def _fast_path(gf: GradCallable, plan: GradPlan, g: LoadedGradient, args: tuple) -> Callable:
    """A Python function for calls with this signature: calls with no
    overlapping arrays go straight to the compiled gradient (after copying
    the arrays f writes: grad leaves its arguments unchanged); others take
    the slow path, which handles aliasing (and its errors)."""
    params = [f"a{k}" for k in range(len(args))]
    arrays = [p for p, a in zip(params, args) if isinstance(a, np.ndarray)]
    env: dict[str, object] = {"call": g.call, "zeros": np.zeros, "empty": np.empty,
                              "internal_overlap": internal_overlap,
                              "overlap": shadows.arrays_overlap, "slow": gf.slow_call}
    lines = [f"def fast({', '.join(params)}):"]
    slow = f"        return slow(({', '.join(params)},))"
    if len(arrays) > 1 and plan.written:
        lines += [f"    if overlap({', '.join(arrays)}):", slow]
    for k in sorted(plan.written):
        if not args[k].flags.c_contiguous:  # type: ignore[union-attr]
            # A written view whose elements share memory: the slow path's error.
            lines += [f"    if internal_overlap(a{k}):", slow]
    for k in sorted(plan.written - g.private):  # the gradient copies g.private itself
        lines.append(f"    a{k} = a{k}.copy()")
    call_args = []
    for k, (p, a, act) in enumerate(zip(params, args, plan.activity)):
        call_args.append(p)
        if act == "dup":
            # Contiguous whatever the array's layout: indices are logical,
            # and a broadcast array's elements each get their own entry.
            env[f"dt{k}"] = a.dtype  # type: ignore[union-attr]
            # The gradient zero-fills the shadows of g.private and g.zeroed itself;
            # a serial one those of g.zeroed only below SERIAL_ZERO_FILL_BYTES
            # (private_copies.zero_marked_shadows: from there on calloc clears nothing).
            if k in g.private:
                lines.append(f"    s{k} = empty({p}.shape, dt{k})")
            elif k in g.zeroed:
                limit = SERIAL_ZERO_FILL_BYTES // a.dtype.itemsize  # type: ignore[union-attr]
                lines.append(f"    s{k} = (empty if {p}.size < {limit} else zeros)({p}.shape, dt{k})")
            else:
                lines.append(f"    s{k} = zeros({p}.shape, dt{k})")
            call_args.append(f"s{k}")
    # A ValueError of the entry (a misaligned array: unpickled arrays may be,
    # e.g. on Dask workers) goes to the slow path, which copies such arrays
    # (grad never changes its arguments) or raises the same error.
    lines += ["    try:", f"        out = call({', '.join(call_args)}, 1.0)", "    except ValueError:", slow]
    n_out = int(gf.with_value) + plan.activity.count("active")
    outs = iter(["out"] if n_out == 1 else [f"out[{j}]" for j in range(n_out)])
    value = next(outs) if gf.with_value else None
    grads = [f"s{k}" if plan.activity[k] == "dup" else next(outs) for k in plan.nums]
    result = grads[0] if gf.single else f"({', '.join(grads)},)"
    lines.append(f"    return ({value}, {result})" if gf.with_value else f"    return {result}")
    exec(compile("\n".join(lines) + "\n", f"<adpasses {gf.__name__} fast path>", "exec"), env)
    return env["fast"]  # type: ignore[return-value]


def install_dispatch(obj, fallback: Callable):  # type: ignore[no-untyped-def]
    """The DispatchTable behind `obj(*args)`, created on first use: `obj`
    moves to a subclass of its own whose `__call__` is the table's builtin
    (a builtin is not a descriptor, so it is called without `self`)."""
    if obj._dispatch is None:
        from adpasses.core.compile_locks import locked
        from adpasses.native.dispatch import DispatchTable

        # One table per object, even when threads make first calls at once.
        with locked(("install dispatch", id(obj))):
            if obj._dispatch is None:
                table = DispatchTable(fallback)
                cls = type(obj)
                obj.__class__ = type(cls.__name__, (cls,), {"__call__": table.function,
                                                            "__module__": cls.__module__,
                                                            "__qualname__": cls.__qualname__})
                obj._dispatch = table
    return obj._dispatch


def rebuild_grad(jf, argnums, with_value: bool) -> GradCallable:  # type: ignore[no-untyped-def]
    """The grad/value_and_grad callable a pickle refers to: the one `grad`
    gives for this function, argnums (already checked) and flavour."""
    return jf._grad_functions.setdefault((argnums, with_value), GradCallable(jf, argnums, with_value))
