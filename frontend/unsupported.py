"""What to tell the user about a call or a module the compiler does not
support: the construct, why, and what to write instead.

Kept apart from the compiler so the messages can be read (and kept true)
in one place; `docs/frontend.md` lists them.
"""

from __future__ import annotations

import builtins
import types

import numpy as np

import math

SUPPORTED_MODULES = (math, np)  # modules whose attributes compiled code reads
SUPPORTED_BUILTINS = "abs, min, max, round, float, int, bool, len, print and range (in for loops)"

# Builtins, by name: what to write instead.
BUILTIN_HINTS = {
    "sum": "accumulate in a loop: `s = 0.0`, then `for i in range(len(x)): s += x[i]`",
    "pow": "write a ** b (or math.pow(a, b))",
    "divmod": "write a // b and a % b",
    "enumerate": "loop over the indices: `for i in range(len(x))`, and read x[i]",
    "zip": "loop over the indices: `for i in range(len(x))`, and read x[i], y[i]",
    "reversed": "loop backwards over the indices: `for i in range(len(x) - 1, -1, -1)`",
    "iter": "loop over the indices: `for i in range(len(x))`",
    "next": "loop over the indices: `for i in range(len(x))`",
    "sorted": "sort outside the compiled function and pass the sorted array",
    "any": "write np.any(mask) for a bool array (np.any(x > 0)), or the loop: `found = False`, then "
           "`for i in ...: if cond: found = True`",
    "all": "write np.all(mask) for a bool array (np.all(x > 0)), or the loop: `ok = True`, then "
           "`for i in ...: if not cond: ok = False`",
    "map": "write the loop over the indices",
    "filter": "write the loop over the indices",
    "list": "use a numpy array (an argument, or np.zeros(n) inside the function)",
    "tuple": "assign the numbers to separate variables",
    "isinstance": "argument types are fixed when the function is compiled (one compiled version per "
                  "signature); do the check outside the compiled function",
    "type": "argument types are fixed when the function is compiled (one compiled version per "
            "signature); do the check outside the compiled function",
}

# numpy functions, by name: what to write instead on numbers.
NUMPY_SCALAR_HINTS = {
    "sign": "write (x > 0) - (x < 0) (an int; 0 for 0) or math.copysign(1.0, x) (a float, +-1)",
    "square": "write x * x",
    "reciprocal": "write 1.0 / x",
    "negative": "write -x",
    "add": "write a + b", "subtract": "write a - b", "multiply": "write a * b",
    "divide": "write a / b", "true_divide": "write a / b", "floor_divide": "write a // b",
    "mod": "write a % b", "remainder": "write a % b",
    "clip": "write min(max(x, lo), hi)",
    "where": "write a if cond else b",
    "max": "use max(a, b) (or np.maximum(a, b))", "min": "use min(a, b) (or np.minimum(a, b))",
    "amax": "use max(a, b)", "amin": "use min(a, b)",
    "fmax": "use np.maximum(a, b)", "fmin": "use np.minimum(a, b)",
    "deg2rad": "write x * (math.pi / 180)", "radians": "write x * (math.pi / 180)",
    "rad2deg": "write x * (180 / math.pi)", "degrees": "write x * (180 / math.pi)",
}

# numpy functions that create arrays: what compiled code can allocate.
NUMPY_CREATORS = {"full_like", "linspace", "logspace", "geomspace", "array", "asarray",
                  "ascontiguousarray", "eye", "identity", "zeros", "ones", "empty", "diag",
                  "tile", "repeat", "concatenate", "stack", "hstack", "vstack"}
ALLOCATE = ("allocate with np.zeros(shape), np.ones(shape), np.empty(shape) (optionally dtype=...), "
            "np.full(shape, value) or np.arange(...) and fill it in a loop")
ARRAY_FUNCTIONS = ("np.sum, np.mean, np.max, np.min, np.prod, np.any, np.all, np.count_nonzero, np.dot, "
                   "np.matmul, np.linalg.norm, np.where, np.clip, np.sign, np.abs, np.outer, np.cumsum, "
                   "np.asarray, np.copy, np.logical_and/or/xor/not, np.isnan/isinf/isfinite and the math "
                   "functions (np.exp, np.tanh, ...)")


def builtin_name(fn: object) -> str | None:
    """The name of `fn` among Python's builtins (print, sorted, open, list,
    ...), or None."""
    name = getattr(fn, "__name__", None)
    return name if isinstance(name, str) and getattr(builtins, name, None) is fn else None


def unsupported_builtin(name: str) -> str:
    hint = BUILTIN_HINTS.get(name)
    if hint is None:
        return (f"the builtin {name}() is not supported in compiled code; the builtins it supports are "
                f"{SUPPORTED_BUILTINS}")
    return f"{name}() is not supported in compiled code; {hint}"


def numpy_name(fn: object) -> str | None:
    """`np.<name>` for a numpy function or ufunc (`numpy.<module>.<name>`
    for one outside numpy's namespace), or None."""
    name = getattr(fn, "__name__", None)
    if not isinstance(name, str):
        return None
    if getattr(np, name, None) is fn:
        return f"np.{name}"
    module = getattr(fn, "__module__", None) or ""
    if module == "numpy" or module.startswith("numpy."):
        return f"{module}.{name}"
    return None


def unsupported_numpy(qualified: str, kinds: list[str], supported: str) -> str:
    """`qualified` (np.sum) called with arguments of these kinds ("array",
    "number", "other"): not supported, and what to write instead."""
    name = qualified.rsplit(".", 1)[-1]
    if name in NUMPY_CREATORS:
        return f"{qualified} is not supported in compiled code; {ALLOCATE}"
    if "array" in kinds:
        return (f"{qualified} on arrays is not supported in compiled code (the numpy functions it supports "
                f"on arrays are {ARRAY_FUNCTIONS}); write a loop over the elements, e.g. "
                "`for i in range(len(x)):`")
    hint = NUMPY_SCALAR_HINTS.get(name)
    if hint is not None:
        return f"{qualified} is not supported in compiled code; {hint}"
    return f"{qualified} is not supported in compiled code; the numpy functions it supports on numbers are {supported}"


def readable_attribute(module: types.ModuleType, value: object, is_compiled_function: bool) -> bool:
    """Compiled code may read `module.attr` of a user's module (not one of
    numpy's submodules) when the attribute is a function it compiles, a
    number (frozen) or a module."""
    if module.__name__.startswith("numpy."):
        return False
    return (is_compiled_function or isinstance(value, (bool, int, float, np.integer, np.floating, types.ModuleType)))


def module_attribute(module: types.ModuleType, attr: str, value: object) -> str:
    """`module.attr` read in compiled code, where the attribute is not
    something it compiles (`readable_attribute`): why, and what to write
    instead."""
    mod = module.__name__
    if mod.startswith("numpy."):
        return (f"{mod}.{attr} is not supported in compiled code (numpy's {mod[len('numpy.'):]} module is "
                "not compiled); compute it outside and pass the result as an argument")
    if callable(value):
        return (f"{mod}.{attr} ({type(value).__name__}) cannot be compiled: only functions defined with def, "
                "lambdas, @adpasses.jit functions and math/numpy scalar functions can be called; call it "
                "outside and pass the result as an argument")
    return (f"{mod}.{attr} is a {type(value).__name__}, which compiled code cannot read (it reads numbers, "
            "functions and modules); pass it as an argument")


def value_kind(value: object) -> str:
    """How an argument the compiler cannot pass is described."""
    from adpasses.frontend.values import PyObject, Shape, TupleValue

    if isinstance(value, Shape):
        return "a shape (x.shape)"
    if isinstance(value, TupleValue):
        return "a tuple"
    if isinstance(value, PyObject):
        return "a module" if value.is_module else f"a Python {type(value.obj).__name__}"
    return f"a {type(value).__name__}"
