// Diagnostics: one line, the location, the op; exit status 1; no traceback.
// RUN: not ad-opt %S/Inputs/unsupported.mlir --emit=llvm-ir 2>&1 | filecheck %s --check-prefix=NOLOWERING
// RUN: not ad-opt %S/Inputs/malformed.mlir 2>&1 | filecheck %s --check-prefix=MALFORMED
// RUN: not ad-opt %S/Inputs/unknown_op.mlir 2>&1 | filecheck %s --check-prefix=UNKNOWN
// RUN: not ad-opt %S/Inputs/autodiff_left.mlir --emit=llvm-ir 2>&1 | filecheck %s --check-prefix=AUTODIFF

// NOLOWERING: unsupported.mlir:3:3: error: 'math.ctpop': is not supported by the LLVM lowering
// NOLOWERING-NOT: Traceback
// MALFORMED: malformed.mlir:2:{{[0-9]+}}: error:
// MALFORMED-NOT: Traceback
// UNKNOWN: unknown_op.mlir:2:{{[0-9]+}}: error: Operation foo.bar is not registered
// AUTODIFF: autodiff_left.mlir:{{[0-9]+}}:{{[0-9]+}}: error: 'ad.autodiff': is not supported by the LLVM lowering; run the reverse pass first (ad-opt --reverse)
