"""Binding call arguments to parameters exactly as Python does.

A compiled function takes every parameter positionally. Calls may pass
keywords and omit parameters that have defaults; `binder(fn)` returns a
function with `fn`'s parameter names, defaults and qualified name whose body
returns all its parameters as a tuple. Calling it makes CPython itself do
the binding, so a bad call raises the `TypeError` that calling `fn` would
(`f() got an unexpected keyword argument 'y'`, `f() missing 1 required
positional argument: 'x'`, `f() takes 1 positional argument but 2 were
given`, `f() got multiple values for argument 'x'`), in Python's order of
checks, and a good one costs one C-level call.

The API binds call values with it (`JitFunction.bind`); the frontend binds
the AST nodes of a call to another compiled function with it.
"""

from __future__ import annotations

import inspect
import types
from collections.abc import Callable, Sequence


def has_plain_parameters(fn: types.FunctionType) -> bool:
    """Only positional-or-keyword parameters (no *args, **kwargs,
    keyword-only or positional-only ones): what the frontend compiles."""
    code = fn.__code__
    return (code.co_posonlyargcount == 0 and code.co_kwonlyargcount == 0
            and not code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS))


def binder(fn: types.FunctionType) -> Callable[..., tuple]:
    """`bind(*args, **kwargs)` -> every parameter of `fn`, in order (defaults
    filled in), or the TypeError calling `fn` would raise. `fn` must have
    plain parameters."""
    assert has_plain_parameters(fn), fn
    bind = binder_for(fn.__code__.co_varnames[: fn.__code__.co_argcount], fn.__defaults__, fn.__qualname__)
    bind.__name__ = fn.__name__  # type: ignore[attr-defined]
    return bind


def binder_for(names: Sequence[str], defaults: tuple | None, qualname: str) -> Callable[..., tuple]:
    """`binder` of a function with these parameter names and default values
    (the last len(defaults) parameters); CPython's errors name `qualname`."""
    params = ", ".join(names)
    # A one-element tuple needs its trailing comma; no parameters give ().
    source = f"def bind({params}):\n    return ({params}{',' if len(names) == 1 else ''})\n"
    env: dict[str, object] = {}
    exec(compile(source, f"<adpasses binder of {qualname}>", "exec"), env)
    bind = env["bind"]
    bind.__defaults__ = tuple(defaults) if defaults else None  # type: ignore[attr-defined]
    # CPython's binding errors name the function by its __qualname__.
    bind.__name__ = qualname.rsplit(".", 1)[-1]  # type: ignore[attr-defined]
    bind.__qualname__ = qualname  # type: ignore[attr-defined]
    return bind  # type: ignore[return-value]
