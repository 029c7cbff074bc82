// ad-reverse verifies the module first (op verifiers, and SSA dominance,
// which xDSL's verifier does not check), also under --disable-verify and in
// ad-run: a use before its definition used to be differentiated into a
// wrong gradient (r15: the gradient function returned the seed, 1).
// RUN: not ad-opt %S/Inputs/non_dominating.mlir --reverse 2>&1 | filecheck %s --check-prefix=DOM
// RUN: not ad-opt %S/Inputs/non_dominating.mlir -p ad-reverse --disable-verify 2>&1 | filecheck %s --check-prefix=DOM
// RUN: not ad-run %S/Inputs/non_dominating.mlir 2>&1 | filecheck %s --check-prefix=DOM
// RUN: not ad-opt %S/Inputs/non_dominating_nested.mlir --reverse 2>&1 | filecheck %s --check-prefix=NESTED
// RUN: not ad-opt %S/Inputs/bad_yield.mlir -p ad-reverse --disable-verify 2>&1 | filecheck %s --check-prefix=YIELD

// DOM: non_dominating.mlir:2:3: error: 'arith.addf' uses a value of 'arith.mulf' before its definition
// DOM-EMPTY:
// DOM-NOT: {{.}}
// NESTED: non_dominating_nested.mlir:6:5: error: 'arith.mulf' uses a value of 'arith.addf' before its definition
// YIELD: bad_yield.mlir:4:3: error: 'scf.for' op scf.yield expected 1 args, but got 0. The scf.for must yield its loop-carried variables.
