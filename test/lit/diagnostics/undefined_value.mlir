// A value used but never defined is an error at its use (file:line:col of
// the use), not at the end of the file; and a later function's value of the
// same name does not stand in for it (xDSL's forward references outlived
// the function that made them).
// RUN: ad-opt %s --split-input-file --verify-diagnostics
// RUN: not ad-opt %s --split-input-file 2>&1 | filecheck %s

// CHECK: undefined_value.mlir:[[# @LINE + 3]]:23: error: %zz is used here but never defined: define it before its use
func.func @f(%x: f64) -> f64 {
  // expected-error @+1 {{%zz is used here but never defined}}
  %y = arith.mulf %x, %zz : f64
  func.return %y : f64
}

func.func @g(%x: f64) -> f64 {
  func.return %x : f64
}

// -----

func.func @f(%x: f64) -> f64 {
  // expected-error @+1 {{%w is used here but never defined}}
  %y = arith.mulf %x, %w : f64
  func.return %y : f64
}

func.func @g(%x: f64) -> f64 {
  %w = arith.addf %x, %x : f64
  func.return %w : f64
}

// -----

// Inside a loop body: at the use as well, with the other undefined values.
func.func @h(%x: memref<?xf64>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %x[%i] : memref<?xf64>
    // expected-error @+1 {{%b is used here but never defined (also undefined: %c)}}
    %s = arith.addf %v, %b : f64
    %t = arith.addf %s, %c : f64
    memref.store %t, %x[%i] : memref<?xf64>
  }
  func.return
}

// -----

// A forward reference that a later block of the same function defines is
// fine (cf): no error.
func.func @k(%x: f64) -> f64 {
  cf.br ^bb2
^bb1:
  func.return %y : f64
^bb2:
  %y = arith.addf %x, %x : f64
  cf.br ^bb1
}
