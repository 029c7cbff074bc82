"""Lowering of func/arith/math/memref/scf/cf (+ ad tapes, printf) to LLVM IR.

A direct translator to `llvmlite.ir` (no xDSL llvm dialect, no mlir-opt):
see `core.py` for the design and the per-dialect modules for the op tables.
"""

from __future__ import annotations

from xdsl.dialects.builtin import ModuleOp

from adpasses.core.compile_thread import compile_entry
from adpasses.lowering.core import ModuleTranslator, define_oob_handler


def translate_module(module: ModuleOp, *, boundscheck: bool = True, fastmath: bool = False):  # type: ignore[no-untyped-def]
    """The llvmlite.ir.Module for `module`. (`llvm_jit.compile_module` keeps
    the translator itself: it needs the bounds-check sites too.)"""
    from adpasses.transforms.expand_upstream_ops import without_upstream_only_ops
    from adpasses.transforms.parallelize import with_parallel_loops
    from adpasses.transforms.promote_scratch import without_heap_scratch

    from adpasses.transforms.interchange_columns import with_rows_outside

    expanded = without_upstream_only_ops(module)
    expanded = with_rows_outside(expanded, copy=expanded is module)
    if expanded is module:
        expanded = with_parallel_loops(module)
    else:
        expanded = with_parallel_loops(expanded, copy=False)
    translator = ModuleTranslator(without_heap_scratch(expanded, copy=expanded is module),
                                  boundscheck=boundscheck, fastmath=fastmath)
    llmod = translator.translate()
    define_oob_handler(translator)
    return llmod


@compile_entry
def emit_llvm_ir(module: ModuleOp, *, boundscheck: bool = True) -> str:
    """Textual LLVM IR of `module`, before LLVM's optimizations (after them:
    `llvm_jit.optimized_module` of this text)."""
    return str(translate_module(module, boundscheck=boundscheck))
