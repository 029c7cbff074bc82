// Upstream forms adpasses parses but cannot represent or lower are errors
// at their location, saying what to write instead.
// RUN: not ad-opt %s 2>&1 | filecheck %s

// CHECK: unsupported_forms.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: memref.global @ext has no initial value (an external global): adpasses needs `= dense<...>` or `= uninitialized`
memref.global @ext : memref<3xf64>
