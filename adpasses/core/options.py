"""Checks of the options the public API takes, before anything compiles.

A wrong option used to fail deep inside: `grad(f, argnums=())` raised
SyntaxError from generated code, `argnums=(0, 0)` StopIteration,
`argnums=1.5` "'float' object is not iterable", `compile_module(12345)`
AttributeError, `opt_level=7` AssertionError, and `boundscheck="no"` was
taken as true. Each now raises TypeError (wrong type) or ValueError (wrong
value) from the API call itself, saying what is accepted.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence

import numpy as np


def check_flag(value: object, name: str, api: str) -> bool:
    """A bool option (`boundscheck`, `fastmath`, ...): True or False only,
    since any string, even "no" or "False", would count as true."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise TypeError(f"{api}: {name} must be True or False, got {type(value).__name__} {value!r}")


def check_opt_level(value: object, api: str) -> int:
    if isinstance(value, (bool, np.bool_)) or not hasattr(type(value), "__index__"):
        raise TypeError(f"{api}: opt_level must be an int from 0 to 3, got {type(value).__name__} "
                        f"{value!r}")
    level = operator.index(value)  # type: ignore[call-overload]
    if not 0 <= level <= 3:
        raise ValueError(f"{api}: opt_level must be from 0 to 3 (LLVM's -O0 to -O3), got {level}")
    return level


def _argnum(k: object, api: str) -> int:
    if isinstance(k, (bool, np.bool_)) or not hasattr(type(k), "__index__"):
        raise TypeError(f"{api}: argnums must be an int or a tuple of ints (argument positions), "
                        f"got {type(k).__name__} {k!r}")
    return operator.index(k)  # type: ignore[call-overload]


def check_argnums(argnums: object, api: str, fn_name: str, params: Sequence[str] | None = None,
                  where: str | None = None) -> int | tuple[int, ...]:
    """`argnums` as grad keeps it: one int, or a tuple of distinct ints;
    checked against the function's parameters when they are known. `api`
    names the call in messages, e.g. "grad(sumsq, argnums=())"."""
    if isinstance(argnums, (tuple, list)):
        nums: int | tuple[int, ...] = tuple(_argnum(k, api) for k in argnums)
        if not nums:
            raise ValueError(f"{api}: argnums is empty; give the position of at least one argument "
                             "to differentiate, e.g. argnums=0 or argnums=(0, 1)")
    else:
        nums = _argnum(argnums, api)
    if params is None:
        return nums
    n = len(params)
    listed = nums if isinstance(nums, tuple) else (nums,)
    for k in listed:
        if not -n <= k < n:
            defined = f" (defined at {where})" if where else ""
            names = ", ".join(params) if params else "none"
            bounds = f"from {-n} to {n - 1}" if n else "impossible: it has no parameters"
            raise ValueError(f"{api}: there is no argument {k}: {fn_name}(){defined} has {n} "
                             f"parameter{'s' if n != 1 else ''} ({names}); argnums must be {bounds}")
    seen: dict[int, int] = {}
    for k in listed:
        if k % n in seen:
            raise ValueError(f"{api}: argnums names argument {k % n} ({params[k % n]}) twice; "
                             "list each argument once")
        seen[k % n] = k
    return nums


def check_module_input(module_or_text: object, api: str = "compile_module()") -> None:
    """compile_module takes an xDSL ModuleOp or MLIR text."""
    from xdsl.dialects.builtin import ModuleOp

    if isinstance(module_or_text, (str, ModuleOp)):
        return
    if isinstance(module_or_text, (bytes, bytearray)):
        raise TypeError(f"{api} takes MLIR text as str, got {type(module_or_text).__name__}; decode "
                        "it first (data.decode('utf-8'))")
    what = type(module_or_text).__name__
    hint = ""
    if hasattr(module_or_text, "walk") and hasattr(module_or_text, "name"):
        hint = f" (a '{getattr(module_or_text, 'name', what)}' op: wrap it in a builtin.module)"
    raise TypeError(f"{api} takes an xDSL builtin.module (ModuleOp) or MLIR text (str), got "
                    f"{what}{hint}")
