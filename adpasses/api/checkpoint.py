"""`adpasses.checkpoint(g)`: a function whose calls from compiled code are
recomputed in the reverse sweep instead of taped (like `jax.checkpoint`).

    @adpasses.checkpoint
    def step(u, dt): ...          # or step = adpasses.checkpoint(jitted_step)

    @adpasses.jit
    def simulate(u, steps, dt):
        for t in range(steps):
            step(u, dt)           # a func.call marked ad.checkpoint
        ...

Under differentiation the forward sweep runs `step` as it is (nothing
taped inside it); the reverse sweep reruns it, taping locally, then
reverses it, on its inputs: the scalars the cache plan makes available and
snapshots of the arrays that the call or later code overwrites
(docs/cache.md, "Checkpointing"). Called from Python, it calls `g`.
"""

from __future__ import annotations

import functools
import types
from typing import Any


class Checkpointed:
    """`g`, whose calls from compiled code are checkpointed."""

    __adpasses_checkpoint__ = True  # the frontend marks calls of it ad.checkpoint

    def __init__(self, fn: Any):
        inner = getattr(fn, "__adpasses_function__", fn)
        if not isinstance(inner, types.FunctionType):
            raise TypeError(f"adpasses.checkpoint needs a Python function or an adpasses.jit function, "
                            f"got {type(fn).__name__}")
        self.__adpasses_function__ = inner  # how the frontend recognises compiled callees
        self._fn = fn
        functools.update_wrapper(self, inner)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._fn(*args, **kwargs)

    def __repr__(self) -> str:
        return f"adpasses.checkpoint({self.__name__})"


def checkpoint(fn: Any) -> Checkpointed:
    """`fn` (a Python function or an `adpasses.jit` function), its calls from
    compiled code recomputed in the reverse sweep instead of taped."""
    return Checkpointed(fn)
