"""`ad-reverse`: replace every `ad.autodiff` by a call to a generated
gradient, by running the reverse pipeline (transforms/reverse_pipeline.py)
up to, not including, check elision; and `differentiate`, the same
pipeline for one request from Python.

Options of `ad-reverse`: `cache-policy` (`minimal`: min-cut cache
minimisation, default; `min-memory`: the same cut with free recomputation,
Enzyme's choice; `tape-all`: tape every needed in-loop value),
`activity` (false: treat every float as active, for comparison), `report`
(`text` or `json`: print the cache report of every generated function on
stderr), `lower-tapes`, `simplify`, `tape-limit` (bytes; >= 0: time loops
whose tape may exceed it are checkpointed, `ad-checkpoint-loops`),
`checkpoint-schedule` (`auto`, default: whichever of no checkpointing,
sqrt segments and revolve fits tape-limit; `sqrt`; `revolve`) and `snapshots`
(revolve's states; 0: as many as fit in tape-limit).

The pass leaves every access of the gradient bounds-checked (except tape
accesses) and tags the reverse sweep's repeats of forward accesses with
their twins; `ad-elide-shadow-checks`, run after every other pass
(`ad-opt --reverse` does), drops the checks the final IR proves redundant.
`differentiate()` runs that step itself, last (`ReverseOptions.elide_checks`).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass

from adpasses.core.compile_thread import compile_entry
from adpasses.core.context import compiler_context
from adpasses.transforms.build_gradients import BuildGradientsPass, GeneratedGradient, check_cache_policy
from adpasses.transforms.clone_primals import ClonePrimalsPass, clone_primal
from adpasses.transforms.gradient_marks import GradientRequest
from adpasses.transforms.reverse_pipeline import ReverseOptions, reverse_steps

__all__ = ["GeneratedGradient", "ReverseOptions", "ReversePass", "differentiate"]


@compile_entry
def differentiate(
    module: ModuleOp,
    func_name: str,
    activity: Sequence[str],
    ret_activity: Sequence[str],
    *,
    with_primal: bool | Sequence[int] = False,
    width: int = 1,
    strong_zero: bool = False,
    split: bool = False,
    options: ReverseOptions | None = None,
    location_op: Operation | None = None,
    timings: dict[str, float] | None = None,
) -> GeneratedGradient:
    """Add to `module` the reverse-mode derivative of `@func_name` for these
    activities and `width` (cotangents per sweep; see `ad.autodiff`; `with_primal`: True, or the
    indices of the results whose primal it returns; `strong_zero`: Enzyme's flag,
    a zero seed gives zero adjoints even through inf/nan partials); return its name and reports. The steps
    are the reverse pipeline's; the first, for this one request, is
    `clone_primal` (`ad-clone-primals` clones what `ad.autodiff`s ask for
    and verifies the module, which the frontend built valid). `timings`,
    if given, gets the seconds of each step, by pass name. `split`: split mode
    (`ad.autodiff {split = ...}`): the gradient becomes `<name>_aug` (primal
    arguments -> primal results, then the tape's values) and `<name>_rev`
    (shadows, seeds, tape values -> derivatives); `with_primal` is implied."""
    options = options or ReverseOptions()
    check_cache_policy(options.cache_policy)
    chosen = None if isinstance(with_primal, bool) else tuple(with_primal)
    if chosen is not None and len(chosen) == len(ret_activity):
        chosen = None  # every result: the bare flag
    if split:
        chosen = None  # both halves ask for one gradient, built with every primal result
    request = GradientRequest(func_name, tuple(activity), tuple(ret_activity),
                              (bool(with_primal) if chosen is None else bool(chosen)) or split, width,
                              bool(strong_zero), chosen or None, split)
    # The steps use no context (ad-simplify folds with the whole registry,
    # core.context.shared_context, and the Python API skips it): the small
    # one, so that a first gradient imports no parser registry (cold start).
    ctx = compiler_context()
    built: list[GeneratedGradient] = []
    for step in reverse_steps(options):
        start = time.perf_counter()
        if isinstance(step, ClonePrimalsPass):
            clone_primal(module, request, location_op)
        elif isinstance(step, BuildGradientsPass):
            built = step.build(module)
        else:
            step.apply(ctx, module)
        if timings is not None:  # seconds per step, by pass name (ADPASSES_LOG, inspect)
            timings[step.name] = timings.get(step.name, 0.0) + time.perf_counter() - start
    (gradient,) = built
    return gradient


@dataclass(frozen=True)
class ReversePass(ModulePass):
    name = "ad-reverse"

    cache_policy: str = "minimal"
    activity: bool = True
    report: str = ""
    lower_tapes: bool = True
    simplify: bool = True
    tape_limit: int = -1
    loop_local: bool = True
    scalar_replace: bool = True
    interchange_columns: bool = True
    checkpoint_schedule: str = "auto"
    snapshots: int = 0

    def steps(self) -> tuple[ModulePass, ...]:
        """The reverse pipeline's steps this pass runs (`ad-opt` runs them
        one by one, so that `--emit-after` can stop after any)."""
        check_cache_policy(self.cache_policy)
        # Check elision is the pipeline's last pass (ad-elide-shadow-checks),
        # so that no pass after this one can remove a check it relies on.
        return reverse_steps(ReverseOptions(self.cache_policy, self.activity, self.lower_tapes,
                                            self.simplify, elide_checks=False, report=self.report,
                                            tape_limit=self.tape_limit, loop_local=self.loop_local,
                                            scalar_replace=self.scalar_replace,
                                            interchange_columns=self.interchange_columns,
                                            checkpoint_schedule=self.checkpoint_schedule,
                                            snapshots=self.snapshots))

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for step in self.steps():
            step.apply(ctx, op)
