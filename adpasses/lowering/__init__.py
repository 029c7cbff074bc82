"""Lowering of func/arith/math/memref/scf/cf (+ ad tapes, printf) to LLVM IR.

A direct translator to `llvmlite.ir` (no xDSL llvm dialect, no mlir-opt):
see `core.py` for the design and the per-dialect modules for the op tables.
"""

from __future__ import annotations

from xdsl.dialects.builtin import ModuleOp

from adpasses.lowering.core import ModuleTranslator, define_oob_handler


def translate_module(module: ModuleOp, *, boundscheck: bool = True, fastmath: bool = False):  # type: ignore[no-untyped-def]
    """The llvmlite.ir.Module for `module`, and the bounds-check sites
    (source locations, by site number) its error slot refers to."""
    from adpasses.transforms.lower_affine import without_affine

    translator = ModuleTranslator(without_affine(module), boundscheck=boundscheck,
                                  fastmath=fastmath)
    llmod = translator.translate()
    define_oob_handler(translator)
    llmod.check_sites = translator.check_sites  # type: ignore[attr-defined]
    return llmod


def emit_llvm_ir(module: ModuleOp, *, optimize: bool = False, boundscheck: bool = True) -> str:
    """Textual LLVM IR of `module`, before or (optimize) after LLVM's O3."""
    llmod = translate_module(module, boundscheck=boundscheck)
    if not optimize:
        return str(llmod)
    from adpasses.llvm_jit import optimized_module

    return str(optimized_module(str(llmod)))
