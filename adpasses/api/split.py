"""`fwd, rev = adpasses.split(f)`: split-mode reverse differentiation from
Python (Enzyme's augmented forward and reverse passes; `ad.autodiff {split =
forward|reverse}` in MLIR, docs/dialect.md "Split mode"). See docs/api.md.

    out, tape = fwd(*args)          # runs f's forward sweep once, keeps its tape
    grads = rev(tape, cotangent)    # the reverse sweep from that tape

`fwd` compiles (once per argument signature) f's gradient in split mode:
`<g>_aug` returns f's results and the values the reverse sweep reads (tape
buffers and their counters, cached scalars, local arrays), `<g>_rev` takes
the shadows, the seeds and those values. The tape's buffers come back as
numpy arrays that own them (docs/calling_convention.md, array results), so
the tape object is their only owner: they are freed when `rev` has run, or
when an unused tape is garbage-collected, and never twice (the reverse half
is compiled not to free what it takes: `hand_tape_to_caller`).

A tape is reversed once: `rev` takes its values atomically (a list pop,
under the GIL, so two threads cannot both take them); a second `rev`, or
`rev` after one that failed inside the compiled reverse sweep, is a
RuntimeError saying so. A cotangent that does not fit (checked before the
tape is taken) leaves the tape usable. Like `vjp`, the arguments are left
unchanged and later changes to them do not change the gradient: `fwd` runs f
on copies of its array arguments, which the tape keeps when the reverse
sweep reads them.

Activities are `vjp`'s: a float argument is active, a float array dup, the
rest const; each float result is active. Array results are not supported
yet (a TypeError pointing to `vjp`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from adpasses.core.diagnostics import CompileError, for_user
from adpasses.native.arguments import plain_arguments


@dataclass(frozen=True)
class _SplitPlan:
    """One argument signature's compiled halves."""

    aug: Callable
    rev: Callable
    n_results: int
    compiled: object  # the CompiledModule: the halves' machine code lives as long as it


class SplitTape:
    """The opaque tape of one `fwd` call, for one `rev` call of the same
    `split(f)`. Holds what the reverse sweep reads (numpy arrays that own
    the tape's buffers, counters, cached scalars) until `rev` takes it."""

    __slots__ = ("_cell", "_owner", "_plan", "_activity", "_kinds", "_dup_shapes", "state", "__weakref__")

    def __init__(self, values: tuple, owner: object, plan: _SplitPlan, activity: tuple[str, ...],
                 kinds: tuple[str, ...], dup_shapes: list[tuple]):
        self._cell = [values]  # popped by the one rev that runs it
        self._owner = owner
        self._plan = plan
        self._activity = activity
        self._kinds = kinds
        self._dup_shapes = dup_shapes  # (shape, dtype) of each dup argument: its shadow's
        self.state = "ready"
        """"ready", "reversing", "reversed" or "failed: <the exception>"."""

    @property
    def nbytes(self) -> int:
        """Bytes of the tape's arrays (0 once reversed)."""
        if not self._cell:
            return 0
        return sum(v.nbytes for v in self._cell[0] if isinstance(v, np.ndarray))

    def __repr__(self) -> str:
        return f"<adpasses split tape of {getattr(self._owner, 'name', '?')}: {self.state}>"

    def __reduce__(self):  # type: ignore[no-untyped-def]
        raise TypeError("an adpasses split tape holds pointers into this process's memory: it cannot be "
                        "pickled; run the forward and reverse calls in the same process")


class Split:
    """`split(f)`: the pair (`forward`, `reverse`); unpacks as a 2-tuple."""

    def __init__(self, jf) -> None:  # type: ignore[no-untyped-def]
        self._jf = jf
        self.name = jf.__name__
        # Compiled plans live on the jitted function, shared by every split(f):
        # `fwd, rev = adpasses.split(f)` inside a training loop compiled again
        # on each call (~0.3 s); a tape still belongs to its own Split (`owner`).
        plans = getattr(jf, "_split_plans", None)
        if plans is None:
            plans = {}
            jf._split_plans = plans
        self._plans: dict = plans

        def forward(*args: object, **kwargs: object) -> tuple[object, SplitTape]:
            try:
                return self._forward(jf.bind(args, kwargs))
            except CompileError as err:
                raise for_user(err)  # the user's line and the message, not the compiler's frames

        def reverse(tape: SplitTape, cotangent: object = 1.0) -> tuple:
            return self._reverse(tape, cotangent)

        forward.__name__ = f"split_forward_{self.name}"
        forward.__doc__ = (f"(out, tape) of {self.name}: its results and the tape of its forward sweep "
                           "(adpasses.split)")
        reverse.__name__ = f"split_reverse_{self.name}"
        reverse.__doc__ = (f"rev(tape, cotangent): the cotangents of {self.name}'s arguments from a tape "
                           "of its forward call, once per tape (adpasses.split)")
        self.forward, self.reverse = forward, reverse

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter((self.forward, self.reverse))

    def __reduce__(self):  # type: ignore[no-untyped-def]
        # By reference, like jit and grad: split of the same (importable) function.
        return (split, (self._jf,))

    def __repr__(self) -> str:
        return f"adpasses.split({self.name})"

    # -- forward ------------------------------------------------------------------

    def _forward(self, args: tuple) -> tuple[object, SplitTape]:
        from adpasses.api.vjp import _activity

        jf, name = self._jf, self.name
        # f runs on copies: its writes stay off the caller's arrays, and the
        # tape's reads of them are immune to the caller's later writes.
        given = plain_arguments(name, jf._params, args)
        from adpasses.api.aliasing import check_written_distinct

        # Each array is copied on its own (the tape reads the copies): an
        # array f writes must share memory with no other (`f(x, x)` would
        # run on two distinct copies: another number than numpy's).
        check_written_distinct(jf, f"split({name})", given)
        values = [np.array(v, order="K") if isinstance(v, np.ndarray) else v for v in given]
        kinds = jf.result_kinds(values)
        if not kinds:
            raise TypeError(f"split({name}): {name}() returns nothing: there is no output to differentiate; "
                            "to differentiate a function that writes an output array, use "
                            "adpasses.autodiff(f, ..., Duplicated(out, seed_array))")
        if "array" in kinds:
            raise TypeError(f"split({name}): {name}() returns an array; split mode from Python supports "
                            "float (and int) results for now: use adpasses.vjp(f)(*args) for array "
                            "results (it runs the forward sweep again in vjp_fn)")
        rets = tuple("active" if k == "float" else "const" for k in kinds)
        if "active" not in rets:
            raise TypeError(f"split({name}): {name}() returns no float: nothing to differentiate")
        activity = tuple(_activity(v) for v in values)
        if all(a == "const" for a in activity):
            raise TypeError(f"split({name}): no argument of {name}() is a float or a float array: nothing "
                            "to differentiate with respect to")
        plan = self._plan(values, activity, rets)
        out = plan.aug(*values)
        outs = out if isinstance(out, tuple) else (out,)
        primal, tape = outs[:plan.n_results], outs[plan.n_results:]
        dup_shapes = [(v.shape, v.dtype) for v, a in zip(values, activity) if a == "dup"]
        tape_record = SplitTape(tuple(tape), self, plan, activity, kinds, dup_shapes)
        return (primal[0] if len(primal) == 1 else tuple(primal)), tape_record

    def _plan(self, values: list, activity: tuple[str, ...], rets: tuple[str, ...]) -> _SplitPlan:
        from adpasses.core.compile_locks import once
        from adpasses.frontend.signature import signature_key

        key = (signature_key(tuple(values)), activity, rets)
        plan = self._plans.get(key)
        if plan is None:
            plan = once(self._plans, key, lambda: self._compile(values, activity, rets))
        return plan

    def _compile(self, values: list, activity: tuple[str, ...], rets: tuple[str, ...]) -> _SplitPlan:
        from adpasses.api.functions import _private, function_named
        from adpasses.core.compile_locks import load_compiler

        jf = self._jf
        load_compiler()  # before the first lazy import: see compile_locks (fork)
        from adpasses.native.llvm_jit import compile_module, stats
        from adpasses.transforms.reverse_pass import differentiate
        from adpasses.transforms.split_sweeps import hand_tape_to_caller

        record = jf._record("split gradient", values, activity)
        # The arguments are fresh copies: no two share memory.
        module, name = jf.build(values, True)
        g = differentiate(module, name, list(activity), list(rets), split=True, strong_zero=jf.strong_zero,
                          options=jf.reverse_options(), timings=record.stages)
        function_named(module, name).sym_visibility = _private()
        hand_tape_to_caller(module, f"{g.name}_rev")
        before = stats["compiled"]
        compiled = compile_module(module, boundscheck=jf.boundscheck, fastmath=jf.fastmath)
        jf._compiled(record, compiled, before)
        return _SplitPlan(compiled[f"{g.name}_aug"].raw, compiled[f"{g.name}_rev"].raw, len(rets), compiled)

    # -- reverse ------------------------------------------------------------------

    def _reverse(self, tape: object, cotangent: object) -> tuple:
        from adpasses.api.vjp import _seeds

        name = self.name
        if not isinstance(tape, SplitTape):
            raise TypeError(f"split({name}) reverse: the first argument must be the tape that the forward "
                            f"call returned (out, tape = fwd(*args)), got {type(tape).__name__}")
        if tape._owner is not self:
            raise ValueError(f"split({name}) reverse: this tape comes from {tape._owner!r}, not from "
                             f"split({name}): pass each tape to the reverse of the split that made it")
        kinds = tape._kinds
        rets = tuple("active" if k == "float" else "const" for k in kinds)
        seeds = _seeds(name, cotangent, kinds, rets, [None] * len(kinds), who=f"split({name}) reverse")
        try:
            values = tape._cell.pop()  # atomic: one rev per tape, whatever the threads
        except IndexError:
            state = tape.state
            if state == "reversed":
                problem = "was already reversed: each tape is reversed once (its memory is freed then)"
            elif state == "reversing":
                problem = "is being reversed by another call: each tape is reversed once"
            else:
                problem = (f"is spent: its reverse failed ({state.removeprefix('failed: ')}) and may have "
                           "changed what it holds")
            raise RuntimeError(f"split({name}) reverse: this tape {problem}; call the forward again "
                               "for a new tape") from None
        tape.state = "reversing"
        shadows = [np.zeros(shape, dtype) for shape, dtype in tape._dup_shapes]
        try:
            result = tape._plan.rev(*shadows, *seeds, *values)
        except BaseException as err:
            tape.state = f"failed: {type(err).__name__}: {err}"
            raise
        finally:
            del values  # the tape's buffers are freed with their last array
        tape.state = "reversed"
        derivs = iter(result if isinstance(result, tuple) else ([] if result is None else [result]))
        grads = iter(shadows)
        return tuple(next(derivs) if a == "active" else next(grads) if a == "dup" else None
                     for a in tape._activity)


def split(f: object) -> Split:
    """`fwd, rev = split(f)`: `fwd(*args)` -> `(out, tape)`, `rev(tape,
    cotangent=1.0)` -> one cotangent per argument (a float for a float, an
    array like the argument for a float array, None for the rest), like
    `vjp`'s `vjp_fn` but from the tape of that forward call: the forward
    sweep is not run again. Each tape is reversed once."""
    from adpasses.api.functions import as_jit

    return Split(as_jit(f))
