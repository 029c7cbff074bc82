"""Custom derivatives from Python: `custom_vjp`, `custom_jvp` (JAX's calling
conventions) and `extern` (a C function called from compiled code, with a
rule). docs/custom_rules.md.

    @adpasses.custom_vjp
    def log1pexp(x):
        return math.log(1.0 + math.exp(x))

    def log1pexp_fwd(x):
        return log1pexp(x), x                # (output, residuals)

    def log1pexp_bwd(x, g):                  # (residuals, cotangent)
        return (g / (1.0 + math.exp(-x)),)   # one cotangent per argument

    log1pexp.defvjp(log1pexp_fwd, log1pexp_bwd)

The rules are compiled like any called function (the same Python subset).
This module only records them: the frontend (`frontend/custom_rules.py`)
compiles them beside the function and names them in its `ad.custom_rule`
attribute, which the differentiation passes read. Called from Python, a
custom function is its plain Python function.
"""

from __future__ import annotations

import functools
import sys
import types
from collections.abc import Callable

RULES_ATTR = "__adpasses_custom_rules__"
"""Attribute of the Python function: its CustomFunction (the frontend reads it)."""


def _caller_location(depth: int = 2) -> str:
    frame = sys._getframe(depth)
    return f"{frame.f_code.co_filename}:{frame.f_lineno}"


def _python_function(obj: object, what: str) -> types.FunctionType:
    inner = getattr(obj, "__adpasses_function__", obj)
    if isinstance(inner, types.FunctionType) and not isinstance(obj, CustomFunction):
        return inner
    raise TypeError(f"{what} must be a Python function defined with def (or an adpasses.jit "
                    f"function), got {type(obj).__name__}")


class CustomFunction:
    """A function with custom derivative rules (`custom_vjp` / `custom_jvp`).

    `defvjp(fwd, bwd)`: `fwd(*args) -> (out, residuals)` (residuals: a number
    or a tuple of numbers, nested tuples allowed); `bwd(residuals, g) ->` a
    tuple with one cotangent per argument (None: zero, and for int
    arguments). `defjvp(jvp)`: `jvp(primals, tangents) -> (out, tangent_out)`
    (both tuples with one entry per argument). Reverse mode uses the vjp
    rule, or without one the jvp rule (once per float argument); forward
    mode uses the jvp rule. Each may be given once."""

    def __init__(self, fun: object, kind: str):
        fn = _python_function(fun, f"adpasses.{kind}'s argument")
        existing = fn.__dict__.get(RULES_ATTR)
        if existing is not None:
            raise ValueError(f"{fn.__name__} is already a custom function ({existing.kind}, made at "
                             f"{existing.where}); give its rules there")
        self.fun = fn
        self.kind = kind
        self.where = _caller_location(3)
        self.fwd: types.FunctionType | None = None
        self.bwd: types.FunctionType | None = None
        self.jvp: types.FunctionType | None = None
        self.vjp_where: str | None = None
        self.jvp_where: str | None = None
        self.__adpasses_function__ = fn  # jit, grad and the frontend compile fn
        functools.update_wrapper(self, fn)
        fn.__dict__[RULES_ATTR] = self

    def defvjp(self, fwd: Callable, bwd: Callable) -> None:
        """`fwd(*args) -> (out, residuals)`, `bwd(residuals, g) -> (one
        cotangent per argument)`, like `jax.custom_vjp.defvjp`."""
        if self.vjp_where is not None:
            raise ValueError(f"{self.__name__}.defvjp was already called at {self.vjp_where}: a function "
                             "has one reverse rule (compiled callers already use it); define another "
                             "custom_vjp function for another rule")
        self.fwd = _python_function(fwd, f"{self.__name__}.defvjp's fwd")
        self.bwd = _python_function(bwd, f"{self.__name__}.defvjp's bwd")
        self.vjp_where = _caller_location()

    def defjvp(self, jvp: Callable) -> Callable:
        """`jvp(primals, tangents) -> (out, tangent_out)`, like
        `jax.custom_jvp.defjvp`; usable as a decorator."""
        if self.jvp_where is not None:
            raise ValueError(f"{self.__name__}.defjvp was already called at {self.jvp_where}: a function "
                             "has one forward rule; define another custom_jvp function for another rule")
        self.jvp = _python_function(jvp, f"{self.__name__}.defjvp's rule")
        self.jvp_where = _caller_location()
        return jvp

    def __call__(self, *args: object, **kwargs: object) -> object:
        return self.fun(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<adpasses.{self.kind} {self.fun.__qualname__}>"

    def __reduce__(self) -> tuple:
        """Pickled by reference (module and qualified name), like jitted
        functions: the other process imports the module, which makes the
        function and gives it its rules (docs/deployment.md)."""
        from adpasses.api.functions import pickle_reference

        return (rebuild_custom_function, pickle_reference(self.fun, f"adpasses.{self.kind} function"))


def rebuild_custom_function(module: str, qualname: str) -> CustomFunction:
    """The custom function a pickle refers to, found by name in its module."""
    import pickle

    from adpasses.api.functions import find_by_name

    obj = find_by_name(module, qualname)
    if not isinstance(obj, CustomFunction):
        raise pickle.UnpicklingError(f"{module}.{qualname} is a {type(obj).__name__} here, not the custom "
                                     "function that was pickled")
    return obj


def custom_vjp(fun: Callable) -> CustomFunction:
    """`@adpasses.custom_vjp`: give `fun` a reverse rule with `.defvjp(fwd, bwd)`."""
    return CustomFunction(fun, "custom_vjp")


def custom_jvp(fun: Callable) -> CustomFunction:
    """`@adpasses.custom_jvp`: give `fun` a forward rule with `.defjvp(jvp)`."""
    return CustomFunction(fun, "custom_jvp")


# -- extern: a C function called from compiled code ---------------------------------

_C_TYPES = {
    "f64": "double", "float64": "double", "double": "double", "float": "double",
    "i64": "int64", "int64": "int64", "int": "int64", "long": "int64",
}


def _parse_signature(signature: object) -> tuple[list[str], str]:
    """`"double(double, int64)"` -> (["double", "int64"], "double")."""
    text = signature.replace(" ", "") if isinstance(signature, str) else None
    if not text or "(" not in text or not text.endswith(")"):
        raise ValueError(f"adpasses.extern: the signature must be a string like 'double(double, int64)', "
                         f"got {signature!r}")
    ret, _, args = text[:-1].partition("(")
    kinds = [a for a in args.split(",") if a] if args else []
    for kind in [ret, *kinds]:
        if kind not in _C_TYPES:
            raise ValueError(f"adpasses.extern: unknown type {kind!r} in {signature!r}; the types are "
                             "double (f64, float64, float) and int64 (i64, int, long)")
    if _C_TYPES[ret] != "double":
        raise ValueError(f"adpasses.extern: {signature!r} must return a double (a float)")
    return [_C_TYPES[k] for k in kinds], "double"


class Extern:
    """A C function (ctypes function or address) that compiled code calls
    directly, with optional rules: `vjp(*primals, g) -> (one cotangent per
    argument)` (a Python function compiled like a custom_vjp's bwd, whose
    residuals are the arguments; or another extern taking the arguments and
    g and returning the cotangent of the one float argument), `jvp(primals,
    tangents) -> (out, tangent_out)` (like custom_jvp's). From Python it is
    called through ctypes."""

    def __init__(self, fn: object, signature: str, vjp: object = None, jvp: object = None,
                 name: str | None = None):
        import ctypes

        self.args, self.ret = _parse_signature(signature)
        if isinstance(fn, int) and not isinstance(fn, bool):
            address = fn
            base = name or f"fn_{address:x}"
        elif isinstance(fn, ctypes._CFuncPtr):  # type: ignore[attr-defined]
            address = ctypes.cast(fn, ctypes.c_void_p).value or 0
            base = name or getattr(fn, "__name__", None) or f"fn_{address:x}"
        else:
            raise TypeError(f"adpasses.extern needs a ctypes function or an address (int), got "
                            f"{type(fn).__name__}")
        if not address:
            raise ValueError("adpasses.extern: the function's address is NULL")
        from adpasses.native import externs

        self.address = address
        self.signature = signature
        self.kind = "extern"
        self.__adpasses_extern__ = True  # how the frontend recognises it
        self.where = _caller_location(3)
        self.symbol = externs.register(f"{base}_{'_'.join(['d' if a == 'double' else 'i' for a in self.args])}",
                                       address)
        self.__name__ = base
        self.fwd = self.bwd = None
        self.vjp = vjp if vjp is None or isinstance(vjp, Extern) else _python_function(vjp, "extern's vjp")
        self.jvp = jvp if jvp is None else _python_function(jvp, "extern's jvp")
        if isinstance(self.vjp, Extern):
            floats = [k for k, a in enumerate(self.args) if a == "double"]
            if len(floats) != 1 or self.vjp.args != [*self.args, "double"]:
                raise TypeError(f"adpasses.extern: an extern vjp rule takes the arguments and the "
                                f"cotangent and returns the cotangent of the one float argument: "
                                f"{base} needs one with signature "
                                f"'double({', '.join([*self.args, 'double'])})' and one float argument")
        c = {"double": ctypes.c_double, "int64": ctypes.c_int64}
        self._ctypes = ctypes.CFUNCTYPE(c[self.ret], *(c[a] for a in self.args))(address)

    def __call__(self, *args: object) -> float:
        if len(args) != len(self.args):
            raise TypeError(f"{self.__name__}() takes {len(self.args)} arguments ({len(args)} given)")
        return self._ctypes(*args)

    def __repr__(self) -> str:
        return f"<adpasses.extern {self.__name__} {self.signature} at {self.address:#x}>"


def extern(fn: object, signature: str, *, vjp: object = None, jvp: object = None,
           name: str | None = None) -> Extern:
    """A C function callable from compiled code: `fn` a ctypes function or
    an address, `signature` like 'double(double, int64)'. `vjp`, `jvp`: its
    derivative rules (see Extern)."""
    return Extern(fn, signature, vjp, jvp, name)
