// RUN: ad-opt %s --emit=llvm-ir | filecheck %s
// scf.for: a header block with phis for the induction variable and the
// iter_args; scf.if with results: a join block with phis; scf.while: the
// before region loops back from the after region; cf branches pass block
// arguments as phis.

// CHECK-LABEL: define double @"u.loops"(i64 %"n", double %"a")
// CHECK: for.header:
// CHECK-NEXT: phi i64
// CHECK-NEXT: phi double
// CHECK: if.end:
// CHECK-NEXT: phi double
// CHECK: while.before:
// CHECK-NEXT: phi double
// CHECK: br label %"while.before"
func.func @loops(%n: index, %a: f64) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1.0 : f64
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %a) -> (f64) {
    %s = arith.addf %acc, %one : f64
    scf.yield %s : f64
  }
  %big = arith.cmpf ogt, %r, %a : f64
  %v = scf.if %big -> (f64) {
    scf.yield %r : f64
  } else {
    scf.yield %a : f64
  }
  %w = scf.while (%x = %v) : (f64) -> f64 {
    %go = arith.cmpf ogt, %x, %one : f64
    scf.condition(%go) %x : f64
  } do {
  ^bb0(%y: f64):
    %h = arith.mulf %y, %one : f64
    %h2 = arith.subf %h, %one : f64
    scf.yield %h2 : f64
  }
  func.return %w : f64
}

// CHECK-LABEL: define double @"u.branches"(double %"a")
// CHECK: phi double
func.func @branches(%a: f64) -> f64 {
  %z = arith.constant 0.0 : f64
  %c = arith.cmpf olt, %a, %z : f64
  cf.cond_br %c, ^neg(%a : f64), ^pos(%a : f64)
^neg(%x: f64):
  %m = arith.negf %x : f64
  cf.br ^done(%m : f64)
^pos(%y: f64):
  cf.br ^done(%y : f64)
^done(%r: f64):
  func.return %r : f64
}
