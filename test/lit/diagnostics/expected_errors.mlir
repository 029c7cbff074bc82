// --verify-diagnostics with MLIR's expected-error annotations: each part
// produces the error it announces, at the line it names (@+N, @-N, @above,
// @below or its own line), and a part without annotation produces none.
// RUN: ad-opt %s --reverse --split-input-file --verify-diagnostics
// A mismatch is reported and fails (the second file expects wrong things).
// RUN: not ad-opt %S/Inputs/wrong_expectations.mlir --reverse --split-input-file --verify-diagnostics 2>&1 | filecheck %s --check-prefix=WRONG

// WRONG: wrong_expectations.mlir:3: error: expected error "no such message", got: {{.*}}wrong_expectations.mlir:5:3: error: 'func.call_indirect'
// WRONG-NEXT: wrong_expectations.mlir:16: error: expected error at line 17, got it at line 18: {{.*}}recursive call
// WRONG-NEXT: wrong_expectations.mlir:29: error: expected error "an error" (at line 30) was not produced
// WRONG-NEXT: unexpected error: {{.*}}wrong_expectations.mlir:37:28: error: undefined location alias '#loc9'

func.func @f(%g: (f64) -> f64, %x: f64) -> f64 {
  // expected-error @+1 {{calls a function value that is not a func.constant}}
  %y = func.call_indirect %g(%x) : (f64) -> f64
  func.return %y : f64
}
func.func @main(%x: f64, %h: (f64) -> f64) -> f64 {
  %one = arith.constant 1.0 : f64
  %d = ad.autodiff @f(%h, %x, %one) {activity = [const, active], ret_activity = [active]} : ((f64) -> f64, f64, f64) -> f64
  func.return %d : f64
}

// -----

func.func @r(%x: f64) -> f64 {
  %y = func.call @r(%x) : (f64) -> f64  // expected-error {{recursive call (r -> r) cannot be inlined for differentiation}}
  func.return %y : f64
}
func.func @main(%x: f64) -> f64 {
  %one = arith.constant 1.0 : f64
  %d = ad.autodiff @r(%x, %one) {activity = [active], ret_activity = [active]} : (f64, f64) -> f64
  func.return %d : f64
}

// -----

func.func @g(%x: f64) -> f64 {
  func.return %x : f64 loc(#loc9)
  // expected-error @above {{undefined location alias '#loc9'}}
}

// -----

// No annotation, no error.
func.func @ok(%x: f64) -> f64 {
  func.return %x : f64
}
