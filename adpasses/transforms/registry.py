"""Every pass adpasses adds to xDSL's, by name, imported only when used.

`ad-opt -p NAME{options}` finds them here; the named flags of `ad-opt`
(`--reverse`, `--print-activity`, ...) are spelled as these passes.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.passes import ModulePass


def _reverse() -> type[ModulePass]:
    from adpasses.transforms.reverse_pass import ReversePass

    return ReversePass


def _inline() -> type[ModulePass]:
    from adpasses.transforms.inline_calls import InlineCallsPass

    return InlineCallsPass


def _lower_tapes() -> type[ModulePass]:
    from adpasses.transforms.lower_tapes import LowerTapesPass

    return LowerTapesPass


def _elide_shadow_checks() -> type[ModulePass]:
    from adpasses.transforms.elide_shadow_checks import ElideShadowChecksPass

    return ElideShadowChecksPass


def _print_activity() -> type[ModulePass]:
    from adpasses.transforms.print_activity import PrintActivityPass

    return PrintActivityPass


def _lower_affine() -> type[ModulePass]:
    from adpasses.transforms.lower_affine import LowerAffinePass

    return LowerAffinePass


def _lower_linalg() -> type[ModulePass]:
    from adpasses.transforms.lower_linalg import LowerLinalgPass

    return LowerLinalgPass


def _expand_upstream_ops() -> type[ModulePass]:
    from adpasses.transforms.expand_upstream_ops import ExpandUpstreamOpsPass

    return ExpandUpstreamOpsPass


def _lower_matmul() -> type[ModulePass]:
    from adpasses.transforms.lower_matmul import LowerMatmulPass

    return LowerMatmulPass


def _parallelize() -> type[ModulePass]:
    from adpasses.transforms.parallelize import ParallelizePass

    return ParallelizePass


def _promote_scratch() -> type[ModulePass]:
    from adpasses.transforms.promote_scratch import PromoteScratchPass

    return PromoteScratchPass


def _fold_overlap_checks() -> type[ModulePass]:
    from adpasses.transforms.overlap_checks import FoldOverlapChecksPass

    return FoldOverlapChecksPass


def _lower_ad_ops() -> type[ModulePass]:
    from adpasses.transforms.lower_ad_ops import LowerAdOpsPass

    return LowerAdOpsPass


def _interchange_columns() -> type[ModulePass]:
    from adpasses.transforms.interchange_columns import InterchangeColumnsPass

    return InterchangeColumnsPass


def _print_alias() -> type[ModulePass]:
    from adpasses.transforms.print_alias import PrintAliasPass

    return PrintAliasPass


def _clone_primals() -> type[ModulePass]:
    from adpasses.transforms.clone_primals import ClonePrimalsPass

    return ClonePrimalsPass


def _scalar_replace() -> type[ModulePass]:
    from adpasses.transforms.scalar_replace import ScalarReplacePass

    return ScalarReplacePass


def _count_while() -> type[ModulePass]:
    from adpasses.transforms.count_while import CountWhilePass

    return CountWhilePass


def _checkpoint_loops() -> type[ModulePass]:
    from adpasses.transforms.checkpoint_loops import CheckpointLoopsPass

    return CheckpointLoopsPass


def _build_gradients() -> type[ModulePass]:
    from adpasses.transforms.build_gradients import BuildGradientsPass

    return BuildGradientsPass


def _fuse_loops() -> type[ModulePass]:
    from adpasses.transforms.fuse_loops import FuseLoopsPass

    return FuseLoopsPass


def _private_copies() -> type[ModulePass]:
    from adpasses.transforms.private_copies import PrivateCopiesPass

    return PrivateCopiesPass


def _zero_shadows() -> type[ModulePass]:
    from adpasses.transforms.private_copies import ZeroShadowsPass

    return ZeroShadowsPass


def _dead_forward() -> type[ModulePass]:
    from adpasses.transforms.dead_forward import DeadForwardPass

    return DeadForwardPass


def _simplify() -> type[ModulePass]:
    from adpasses.transforms.simplify import SimplifyPass

    return SimplifyPass


def _split_sweeps() -> type[ModulePass]:
    from adpasses.transforms.split_sweeps import SplitSweepsPass

    return SplitSweepsPass


def _drop_gradient_marks() -> type[ModulePass]:
    from adpasses.transforms.gradient_marks import DropGradientMarksPass

    return DropGradientMarksPass


def _forward() -> type[ModulePass]:
    from adpasses.transforms.forward_pass import ForwardPass

    return ForwardPass


def _wrap() -> type[ModulePass]:
    from adpasses.transforms.wrap import WrapPass

    return WrapPass


AD_PASSES: dict[str, Callable[[], type[ModulePass]]] = {
    "ad-wrap": _wrap,
    "ad-reverse": _reverse,
    # the steps of ad-reverse, in order (adpasses/transforms/reverse_pipeline.py)
    "ad-clone-primals": _clone_primals,
    "ad-inline-calls": _inline,
    "ad-scalar-replace": _scalar_replace,  # with scalar-replace (the default)
    "ad-interchange-columns": _interchange_columns,  # with interchange-columns (the default)
    "ad-count-while": _count_while,
    "ad-fuse-loops": _fuse_loops,  # with loop-local reverse (the default)
    "ad-private-copies": _private_copies,  # grad: the arrays f writes copied inside the gradient
    "ad-zero-shadows": _zero_shadows,  # grad of a parallel function: result shadows zeroed on the pool
    "ad-checkpoint-loops": _checkpoint_loops,  # with tape-limit only
    "ad-build-gradients": _build_gradients,
    "ad-lower-tapes": _lower_tapes,
    "ad-dead-forward": _dead_forward,
    "ad-simplify": _simplify,
    "ad-split-sweeps": _split_sweeps,
    "ad-drop-gradient-marks": _drop_gradient_marks,
    "ad-elide-shadow-checks": _elide_shadow_checks,
    "ad-forward": _forward,
    "ad-print-activity": _print_activity,
    "ad-print-alias": _print_alias,
    "ad-lower-affine": _lower_affine,
    "ad-expand-upstream-ops": _expand_upstream_ops,
    "ad-lower-linalg": _lower_linalg,
    "ad-lower-ad-ops": _lower_ad_ops,
    "ad-fold-overlap-checks": _fold_overlap_checks,
    "ad-lower-matmul": _lower_matmul,
    "ad-promote-scratch": _promote_scratch,
    "ad-parallelize": _parallelize,
}
