// The reverse pipeline run step by step with ad-opt -p (%{reverse_steps}:
// the steps of adpasses/transforms/reverse_pipeline.py, elision last) prints
// what ad-opt --reverse prints. test/test_reverse_pipeline.py checks the
// same on every lit input, with each option.
// RUN: ad-opt %S/../reverse/scf_while.mlir --reverse > %t.while.reverse
// RUN: ad-opt %S/../reverse/scf_while.mlir -p '%{reverse_steps}' > %t.while.steps
// RUN: diff %t.while.reverse %t.while.steps
// RUN: ad-opt %S/../reverse/calls.mlir --reverse --no-simplify > %t.calls.reverse
// RUN: ad-opt %S/../reverse/calls.mlir -p '%{reverse_steps_no_simplify}' > %t.calls.steps
// RUN: diff %t.calls.reverse %t.calls.steps
// RUN: ad-opt %S/../safety/affine.mlir --reverse --emit=llvm-ir > %t.affine.reverse
// RUN: ad-opt %S/../safety/affine.mlir -p '%{reverse_steps}' --emit=llvm-ir > %t.affine.steps
// RUN: diff %t.affine.reverse %t.affine.steps
// RUN: ad-opt %S/../reverse/dead_forward_checks.mlir --reverse > %t.dead.reverse
// RUN: ad-opt %S/../reverse/dead_forward_checks.mlir -p '%{reverse_steps}' > %t.dead.steps
// RUN: diff %t.dead.reverse %t.dead.steps
// RUN: ad-opt %S/../reverse/scf_while.mlir -p 'ad-reverse,ad-elide-shadow-checks' > %t.while.pass
// RUN: diff %t.while.reverse %t.while.pass
