"""adpasses: reverse-mode automatic differentiation on xDSL, JIT-compiled
with llvmlite.

    import adpasses

    @adpasses.jit
    def energy(x):
        ...
    adpasses.grad(energy)(x)

Importing this package is cheap: the compiler (xDSL, llvmlite) is loaded on
first use.
"""

from __future__ import annotations

from typing import Any

from adpasses.core.diagnostics import CompileError

__version__ = "0.1.0"

_LAZY = {
    "jit": "adpasses.api.functions",
    "grad": "adpasses.api.functions",
    "value_and_grad": "adpasses.api.functions",
    "autodiff": "adpasses.api.functions",
    "inspect": "adpasses.api.functions",
    "cache_report": "adpasses.api.functions",
    "Active": "adpasses.api.functions",
    "Const": "adpasses.api.functions",
    "Duplicated": "adpasses.api.functions",
    "DuplicatedNoNeed": "adpasses.api.functions",
    "compile_module": "adpasses.native.llvm_jit",
}


def __getattr__(name: str) -> Any:
    import importlib

    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value  # later lookups do not come back here
        return value
    if name == "runtime":
        return importlib.import_module("adpasses.native.runtime")
    raise AttributeError(f"module 'adpasses' has no attribute {name!r}")


__all__ = ["CompileError", "__version__", *_LAZY, "runtime"]
