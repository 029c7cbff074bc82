// Enzyme-MLIR ReverseMode tests that adpasses answers with an error, one
// line at the construct, no traceback:
// - bodyless.mlir: the derivative of a declaration (Enzyme errs too);
// - bbarg-order.mlir: a function body with cf.br / cf.cond_br and block
//   arguments forming a loop on ^bb1. adpasses lifts cf branches that form
//   an if/else (or a chain) to scf (../cf_lift.mlir), not loops; the error
//   names the branch and what to write instead. A loop written as
//   scf.while is differentiated (scf_while.mlir).
// RUN: not ad-opt %S/Inputs/bodyless.mlir --reverse 2>&1 | filecheck %s --check-prefix=BODYLESS
// RUN: not ad-opt %S/Inputs/bbarg_order.mlir --reverse 2>&1 | filecheck %s --check-prefix=CF

// BODYLESS: bodyless.mlir:3:3: error: no function '@ext' with a body to differentiate
// BODYLESS-NOT: Traceback
// CF: bbarg_order.mlir:4:3: error: 'cf.br': unstructured control flow cannot be differentiated: express it with scf.for / scf.while / scf.if
// CF-NOT: Traceback
