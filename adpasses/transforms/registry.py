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


def _print_alias() -> type[ModulePass]:
    from adpasses.transforms.print_alias import PrintAliasPass

    return PrintAliasPass


AD_PASSES: dict[str, Callable[[], type[ModulePass]]] = {
    "ad-reverse": _reverse,
    "ad-inline-calls": _inline,
    "ad-lower-tapes": _lower_tapes,
    "ad-elide-shadow-checks": _elide_shadow_checks,
    "ad-print-activity": _print_activity,
    "ad-print-alias": _print_alias,
    "ad-lower-affine": _lower_affine,
}
