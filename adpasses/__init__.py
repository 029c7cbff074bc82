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
    "Output": "adpasses.api.markers",
    "jacrev": "adpasses.api.jacobians",
    "vjp": "adpasses.api.vjp",
    "split": "adpasses.api.split",
    "jvp": "adpasses.api.forward",
    "jacfwd": "adpasses.api.forward",
    "hessian": "adpasses.api.forward",
    "hvp": "adpasses.api.forward",
    "fwddiff": "adpasses.api.forward",
    "compile_module": "adpasses.native.llvm_jit",
    "custom_vjp": "adpasses.api.custom_rules",
    "custom_jvp": "adpasses.api.custom_rules",
    "extern": "adpasses.api.custom_rules",
    "checkpoint": "adpasses.api.checkpoint",
    "vmap": "adpasses.api.vmap",
    "prange": "adpasses.core.parallel",
    "set_num_threads": "adpasses.native.runtime",
    "get_num_threads": "adpasses.native.runtime",
}


# Modules moved into the stage packages (issue 14): scripts that import an
# old path (`from adpasses.llvm_jit import compile_module`) get the module at
# its new place. Nothing is imported until such a path is asked for.
_MOVED = {
    "activity": "analysis.activity",
    "affine_index": "analysis.affine_index",
    "alias": "analysis.alias",
    "aliasing": "api.aliasing",
    "arguments": "native.arguments",
    "autodiff_call": "api.autodiff_call",
    "cache_model": "cache.cost_model",
    "compile_locks": "core.compile_locks",
    "compile_thread": "core.compile_thread",
    "context": "core.context",
    "ctypes_entry": "native.ctypes_entry",
    "diagnostics": "core.diagnostics",
    "dispatch": "native.dispatch",
    "dispatch_ir": "native.dispatch_ir",
    "effects": "core.effects",
    "fuzz": "tools.fuzz",
    "gradcall": "api.gradcall",
    "gradient": "reverse.gradient",
    "index_arith": "core.index_arith",
    "ir_facts": "core.ir_facts",
    "ir_walk": "core.ir_walk",
    "literals": "core.literals",
    "llvm_jit": "native.llvm_jit",
    "markers": "api.markers",
    "memory_writes": "analysis.memory_writes",
    "memref_access": "analysis.memref_access",
    "memref_views": "analysis.memref_views",
    "mincut": "cache.mincut",
    "options": "core.options",
    "passes": "transforms.registry",
    "planner": "cache.planner",
    "pyentry": "native.pyentry",
    "report": "cache.report",
    "reverse_context": "reverse.reverse_context",
    "rules": "reverse.rules",
    "runtime": "native.runtime",
    "shadows": "api.shadows",
    "stop_codes": "core.stop_codes",
    "type_errors": "core.type_errors",
    "types": "core.types",
    "verify": "core.verify",
}


class _MovedModules:
    """A meta-path finder and loader for the old flat module paths."""

    @staticmethod
    def find_spec(name: str, path: object = None, target: object = None) -> Any:
        old = name[len("adpasses."):] if name.startswith("adpasses.") else None
        if old not in _MOVED:
            return None
        import importlib.util

        return importlib.util.spec_from_loader(name, _MovedModules)

    @staticmethod
    def create_module(spec: Any) -> Any:
        import importlib

        module = importlib.import_module("adpasses." + _MOVED[spec.name[len("adpasses."):]])
        spec.loader_state = module.__spec__  # the import system overwrites __spec__
        return module

    @staticmethod
    def exec_module(module: Any) -> None:
        # Already executed at its new place; give it back its own spec.
        module.__spec__ = module.__spec__.loader_state


if not any(finder is _MovedModules for finder in __import__("sys").meta_path):
    __import__("sys").meta_path.append(_MovedModules)


def __getattr__(name: str) -> Any:
    import importlib

    if name in _LAZY:
        # Under the compiler's import lock: a fork on another thread waits
        # for it rather than copy a half-done import (core/compile_locks.py).
        from adpasses.core.compile_locks import import_locked

        value = getattr(import_locked(_LAZY[name]), name)
        globals()[name] = value  # later lookups do not come back here
        return value
    if name == "runtime":
        return importlib.import_module("adpasses.native.runtime")
    raise AttributeError(f"module 'adpasses' has no attribute {name!r}")


__all__ = ["CompileError", "__version__", *_LAZY, "runtime"]
