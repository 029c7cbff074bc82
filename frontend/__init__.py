"""The Python frontend: Python functions over floats, ints and numpy arrays
to func/arith/math/memref/scf IR with Python source locations.

    module, name = build_module(pyfunc, [ArrayArg("float64", 1, True), ScalarArg("float")])

See docs/frontend.md for the language accepted.
"""

from __future__ import annotations

import types
from typing import TYPE_CHECKING

from adpasses.core.compile_thread import compile_entry
from adpasses.frontend.signature import ArgType, ArrayArg, ScalarArg, arg_type, signature_key

if TYPE_CHECKING:  # xDSL is imported by the compiler, not by importing the API
    from xdsl.dialects.builtin import ModuleOp


@compile_entry
def build_module(pyfunc: types.FunctionType, arg_types: list[ArgType]) -> "tuple[ModuleOp, str]":
    """Compile `pyfunc` (and the functions it calls) for these argument
    types; the public function is named like the Python function."""
    from adpasses.core.effects import cse  # xDSL's, linear on long expressions and deep nests
    from adpasses.frontend.compiler import ModuleBuilder

    builder = ModuleBuilder()
    # Scalar parameters' NEP 50 flags: Python numbers weak, numpy scalars strong.
    flags = tuple(t.flags if isinstance(t, ScalarArg) else None for t in arg_types)
    f = builder.function(pyfunc, [t.mlir_type() for t in arg_types], public=True, flags=flags)
    # `x[i] = x[i] * x[i]` loads x[i] twice; one load is one taped value.
    cse(builder.module, keep_checks=True)  # an unused x[5] still raises IndexError
    return builder.module, f.sym_name.data


__all__ = ["ArgType", "ArrayArg", "ScalarArg", "arg_type", "build_module", "signature_key"]
