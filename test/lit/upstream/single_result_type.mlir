// Upstream MLIR accepts one result type without parentheses after `->` in
// scf.for, scf.if, scf.parallel and memref.alloca_scope (xDSL 0.74 wanted
// `-> (f64)`: "'(' expected"). Parsed, differentiated and run.
// RUN: ad-run %s | filecheck %s
// f(a) = sum_{i<4} a*i + (a > 0 ? a*a : a) = 6a + a^2: f(3) = 27, f'(3) = 12
// CHECK: f = 27 df = 12

func.func @f(%a: f64) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %z = arith.constant 0.0 : f64
  %s = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %z) -> f64 {
    %ii = arith.index_cast %i : index to i64
    %fi = arith.sitofp %ii : i64 to f64
    %t = arith.mulf %a, %fi : f64
    %n = arith.addf %acc, %t : f64
    scf.yield %n : f64
  }
  %pos = arith.cmpf ogt, %a, %z : f64
  %q = scf.if %pos -> f64 {
    %sq = arith.mulf %a, %a : f64
    scf.yield %sq : f64
  } else {
    scf.yield %a : f64
  }
  %r = memref.alloca_scope -> f64 {
    %sum = arith.addf %s, %q : f64
    memref.alloca_scope.return %sum : f64
  }
  return %r : f64
}

func.func @main() {
  %a = arith.constant 3.0 : f64
  %one = arith.constant 1.0 : f64
  %v = func.call @f(%a) : (f64) -> f64
  %d = ad.autodiff @f(%a, %one) {activity = [active], ret_activity = [active]} : (f64, f64) -> f64
  printf.print_format "f = {} df = {}\n", %v : f64, %d : f64
  return
}
