"""The reverse pipeline: the one list of steps that turns `ad.autodiff`
requests into gradient functions.

`ad-reverse` (`ad-opt --reverse`, `ad-opt -p ad-reverse`) and
`differentiate` (the Python API: jit, grad, autodiff, inspect) run exactly
these steps, each a module pass that `ad-opt -p` can also run alone:

    ad-clone-primals                  verify; a marked copy of each requested primal
    ad-inline-calls                   callees inlined into the copies
    ad-lower-affine{marked-only=true} affine ops of the copies as scf/memref
    ad-lower-linalg{marked-only=true} linalg ops (array expressions) as scf loops
    ad-expand-upstream-ops{marked-only=true}  sincos, ipowi, scf.parallel as known ops
    ad-scalar-replace{marked-only=true}  small local arrays as SSA values (scalar-replace)
    ad-interchange-columns{marked-only=true}  loops down columns as passes over rows
                                      (interchange-columns)
    ad-count-while                    every scf.while counts its iterations
    ad-fuse-loops{marked-only=true}   adjacent loops over one range as one   (loop-local)
    ad-checkpoint-loops{tape-limit}   time loops as checkpointed segments  (tape-limit >= 0)
                                      or revolve calls (schedule=revolve, snapshots)
    ad-build-gradients{...}           activity, cache plan, the gradient in the copy's place
    ad-lower-tapes{marked-only=true}  tapes of known capacity as memrefs   (lower-tapes)
    ad-dead-forward                   dead code, checks kept
    ad-simplify, ad-dead-forward      canonicalize + cse, checks pinned    (simplify)
    ad-split-sweeps                   split requests: augmented primal + reverse function
    ad-drop-gradient-marks            the gradients are plain functions
    ad-elide-shadow-checks            checks the final IR proves redundant (elide-checks)

The functions being differentiated carry `ad.gradient_of` between the
first step and `ad-drop-gradient-marks` (transforms/gradient_marks.py):
the steps act on them only. Check elision is last, and not part of the
pass `ad-reverse`: no pass after it may remove a check it relied on
(`ad-opt --reverse` is `ad-reverse,ad-elide-shadow-checks`).
`ad-opt --emit-after=STEP` prints the IR after a step.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.passes import ModulePass
from xdsl.utils.arg_spec import ArgSpec


@dataclass(frozen=True)
class ReverseOptions:
    cache_policy: str = "minimal"
    activity: bool = True
    lower_tapes: bool = True
    """Lower tapes of known capacity to memrefs (`ad-lower-tapes`)."""
    simplify: bool = True
    """Run canonicalize + cse on the generated function (readable IR; LLVM
    would do the same work at -O3, so the JIT path may skip it)."""
    elide_checks: bool = True
    """End with `ad-elide-shadow-checks`. The pass `ad-reverse` does not
    (`ad-opt --reverse` is `ad-reverse,ad-elide-shadow-checks`)."""
    report: str = ""
    """`text` or `json`: print the cache report of each gradient on stderr."""
    tape_limit: int = -1
    """Bytes: checkpoint the time loops whose tape may exceed it
    (`ad-checkpoint-loops`); -1: no loop checkpointing."""
    scalar_replace: bool = True
    """Small local arrays (`d = np.zeros(3)`) as SSA values before the
    sweep is planned (`ad-scalar-replace`): nothing of them is taped."""
    checkpoint_schedule: str = "auto"
    """`auto` (the schedule that fits `tape_limit`: none, sqrt segments,
    or revolve), `sqrt` (segments of about sqrt(steps) iterations) or
    `revolve` (the binomial schedule, adpasses/cache/revolve.py)."""
    snapshots: int = 0
    """Revolve's snapshot count (the loop's initial state included); 0: as
    many as fit in `tape_limit`."""
    interchange_columns: bool = True
    """A loop over columns whose inner loops walk down each column runs its
    inner loops over rows (`ad-interchange-columns`), before the sweep is
    planned: the gradient's sweeps walk rows too."""
    loop_local: bool = True
    """Reverse loops with independent iterations one iteration at a time
    (`ad-build-gradients{loop-local}`); fuse adjacent loops first
    (`ad-fuse-loops`)."""


def reverse_steps(options: ReverseOptions) -> tuple[ModulePass, ...]:
    """The steps of the reverse pipeline for `options`, in order."""
    from adpasses.transforms.build_gradients import BuildGradientsPass
    from adpasses.transforms.checkpoint_loops import CheckpointLoopsPass
    from adpasses.transforms.clone_primals import ClonePrimalsPass
    from adpasses.transforms.count_while import CountWhilePass
    from adpasses.transforms.dead_forward import DeadForwardPass
    from adpasses.transforms.elide_shadow_checks import ElideShadowChecksPass
    from adpasses.transforms.gradient_marks import DropGradientMarksPass
    from adpasses.transforms.inline_calls import InlineCallsPass
    from adpasses.transforms.interchange_columns import InterchangeColumnsPass
    from adpasses.transforms.expand_upstream_ops import ExpandUpstreamOpsPass
    from adpasses.transforms.fuse_loops import FuseLoopsPass
    from adpasses.transforms.lower_affine import LowerAffinePass
    from adpasses.transforms.lower_linalg import LowerLinalgPass
    from adpasses.transforms.lower_tapes import LowerTapesPass
    from adpasses.transforms.scalar_replace import ScalarReplacePass
    from adpasses.transforms.simplify import SimplifyPass
    from adpasses.transforms.split_sweeps import SplitSweepsPass

    steps: list[ModulePass] = [
        ClonePrimalsPass(),
        InlineCallsPass(),
        LowerAffinePass(marked_only=True),
        LowerLinalgPass(marked_only=True),
        ExpandUpstreamOpsPass(marked_only=True),
    ]
    if options.scalar_replace:
        steps.append(ScalarReplacePass(marked_only=True))
    if options.interchange_columns:
        steps.append(InterchangeColumnsPass(marked_only=True))
    steps += [
        CountWhilePass(),
    ]
    if options.loop_local:
        steps.append(FuseLoopsPass(marked_only=True))
    if options.tape_limit >= 0 or options.snapshots != 0 or options.checkpoint_schedule != "auto":
        steps.append(CheckpointLoopsPass(options.tape_limit, options.checkpoint_schedule, options.snapshots))
    steps += [
        BuildGradientsPass(options.cache_policy, options.activity, options.report, options.loop_local),
    ]
    if options.lower_tapes:
        steps.append(LowerTapesPass(marked_only=True))
    steps.append(DeadForwardPass())
    if options.simplify:
        steps += [SimplifyPass(), DeadForwardPass()]
    steps += [SplitSweepsPass(), DropGradientMarksPass()]
    if options.elide_checks:
        # Last: which shadow accesses need no check is read off the final IR.
        steps.append(ElideShadowChecksPass())
    return tuple(steps)


def step_spec(step: ModulePass) -> str:
    """`step` as `ad-opt -p` spells it (options with dashes, as documented)."""
    spec = step.pipeline_pass_spec()
    return str(ArgSpec(spec.name, {k.replace("_", "-"): v for k, v in spec.parameters.items()}))


def reverse_spec(options: ReverseOptions) -> str:
    """The steps as an `ad-opt -p` pipeline."""
    return ",".join(step_spec(step) for step in reverse_steps(options))
