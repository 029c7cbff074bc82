// Errors of the reverse pass: one line at the op's location, naming the op
// and what to do instead; exit status 1, no traceback.
// RUN: not ad-opt %S/Inputs/no_rule.mlir --reverse 2>&1 | filecheck %s --check-prefix=NORULE
// RUN: not ad-opt %S/Inputs/recursion.mlir --reverse 2>&1 | filecheck %s --check-prefix=REC
// RUN: not ad-opt %S/Inputs/bad_activity.mlir --reverse 2>&1 | filecheck %s --check-prefix=ACT
// RUN: not ad-opt %S/Inputs/cf.mlir --reverse 2>&1 | filecheck %s --check-prefix=CF
// RUN: not ad-opt %S/Inputs/missing_shadow.mlir 2>&1 | filecheck %s --check-prefix=SHADOW

// NORULE: no_rule.mlir:5:3: error: 'llvm.fneg': has no reverse-mode rule, but it computes an active value
// NORULE-NOT: Traceback
// REC: recursion.mlir:6:3: error: 'func.call': recursive call (f -> g -> f) cannot be inlined for differentiation: mark it {ad.checkpoint} (its reverse calls the callee's gradient, one call frame at a time) or rewrite the recursion as a loop
// ACT: bad_activity.mlir:6:3: error: 'ad.autodiff' op argument 0 is 'active' but has type index; only float scalars can be active
// CF: cf.mlir:3:3: error: 'cf.br': unstructured control flow cannot be differentiated: express it with scf.for / scf.while / scf.if
// SHADOW: missing_shadow.mlir:6:3: error: 'ad.autodiff' op expected 3 operands (1 arguments, 1 shadows, 1 seeds), got 2; is a shadow or a seed missing?
