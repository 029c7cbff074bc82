// Upstream forms adpasses parses but cannot represent or lower are errors
// at their location, saying what to write instead.
// RUN: not ad-opt %s 2>&1 | filecheck %s
// RUN: not ad-opt %S/Inputs/indirect_call_of_argument.mlir --emit=llvm-ir 2>&1 | filecheck %s --check-prefix=INDIRECT
// RUN: not ad-opt %S/Inputs/scf_for_unsigned.mlir 2>&1 | filecheck %s --check-prefix=UNSIGNED
// INDIRECT: indirect_call_of_argument.mlir:2:3: error: 'func.call_indirect': calls a function value that is not a func.constant: adpasses can neither differentiate nor compile an indirect call; call the function by name with func.call
// UNSIGNED: scf_for_unsigned.mlir:3:11: error: scf.for unsigned (bounds compared as unsigned integers) is not supported by adpasses: write scf.for with signed bounds

// CHECK: unsupported_forms.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: memref.global @ext has no initial value (an external global): adpasses needs `= dense<...>` or `= uninitialized`
memref.global @ext : memref<3xf64>
