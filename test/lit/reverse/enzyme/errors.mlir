// Enzyme-MLIR ReverseMode tests that adpasses answers with an error, one
// line at the construct, no traceback:
// - bodyless.mlir: the derivative of a declaration (Enzyme errs too);
// (bbarg-order.mlir, a cf loop, was one: cf loops are lifted to scf.while
// now: bbarg_order.mlir.)
// RUN: not ad-opt %S/Inputs/bodyless.mlir --reverse 2>&1 | filecheck %s --check-prefix=BODYLESS

// BODYLESS: bodyless.mlir:3:3: error: no function '@ext' with a body to differentiate
// BODYLESS-NOT: Traceback
