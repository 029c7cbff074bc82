"""The argument markers of `autodiff` (Enzyme's activities): `Const`,
`Active`, `Duplicated`, `DuplicatedNoNeed`; and `Output`, the array a
function writes its result into, for `jacrev`; exported as `adpasses.Active`,
... . Plain slotted classes: creating one costs ~0.1 us (a frozen
dataclass, 1 us). Their own module, so that both `api` and the fast call
paths (`autodiff_call`) import them and neither imports the other.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


class Const:
    """Not differentiated."""

    __slots__ = ("value",)

    def __init__(self, value: object):
        self.value = value

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.value!r})"


class Active:
    """A float whose derivative `autodiff` returns."""

    __slots__ = ("value",)

    def __init__(self, value: float):
        self.value = value

    def __repr__(self) -> str:
        return f"Active({self.value!r})"


class Duplicated:
    """An array and its shadow: the derivative with respect to the array's
    initial contents is added into `shadow`; on entry `shadow` holds the
    seed of the array's final contents (an output array)."""

    __slots__ = ("value", "shadow")

    def __init__(self, value: np.ndarray, shadow: np.ndarray):
        self.value, self.shadow = value, shadow

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.value!r}, {self.shadow!r})"


class DuplicatedNoNeed(Duplicated):
    """Like Duplicated; the array's final contents need not be right."""

    __slots__ = ()


class Output:
    """The array a function writes its result into: `jacrev(f)(x,
    Output(out))` is d out / d x (the call leaves `out` unchanged)."""

    __slots__ = ("value",)

    def __init__(self, value: np.ndarray):
        self.value = value

    def __repr__(self) -> str:
        return f"Output({self.value!r})"


def split_markers(args: Sequence[object], where: str) -> tuple[list, list[str], dict[int, object]]:
    """autodiff's marked arguments as (raw values, activities, user shadows
    by position). An `Active` value is converted with float() here, before
    any array is examined; `where` starts the error messages."""
    raw: list = []
    activity: list[str] = []
    given: dict[int, object] = {}
    for k, a in enumerate(args):
        if isinstance(a, Duplicated):
            raw.append(a.value)
            activity.append("dupnoneed" if isinstance(a, DuplicatedNoNeed) else "dup")
            given[k] = a.shadow
        elif isinstance(a, Active):
            if not isinstance(a.value, (float, np.floating)):
                raise TypeError(f"{where}: Active argument {k} must be a float, got {type(a.value).__name__}")
            raw.append(float(a.value))
            activity.append("active")
        else:
            raw.append(a.value if isinstance(a, Const) else a)
            activity.append("const")
    return raw, activity, given
