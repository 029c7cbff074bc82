// RUN: ad-run %s | filecheck %s
// RUN: not ad-run %S/Inputs/out_of_bounds.mlir 2>&1 | filecheck %s --check-prefix=OOB
// OOB: IndexError: index 3 is out of bounds for axis 0 with size 3 (at {{.*}}out_of_bounds.mlir:4:3)
// Execution through ad-run: arithmetic, math, views, loops, branches, calls
// and cf print the values numpy would give.

func.func private @square(%a: f64) -> f64 {
  %r = arith.mulf %a, %a : f64
  func.return %r : f64
}

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c6 = arith.constant 6 : index
  %one = arith.constant 1.0 : f64
  %half = arith.constant 0.5 : f64
  %z = arith.constant 0.0 : f64
  // CHECK: exp(1) = 2.71828 sqrt(2) = 1.41421 tanh(0.5) = 0.462117
  %e = math.exp %one : f64
  %two = arith.addf %one, %one : f64
  %s = math.sqrt %two : f64
  %t = math.tanh %half : f64
  printf.print_format "exp(1) = {} sqrt(2) = {} tanh(0.5) = {}\n", %e : f64, %s : f64, %t : f64
  // x = [0, 1, 2, 3, 4, 5]; sum of x[1::2] = 1 + 3 + 5 = 9
  %x = memref.alloc(%c6) : memref<?xf64>
  scf.for %i = %c0 to %c6 step %c1 {
    %ii = arith.index_cast %i : index to i64
    %f = arith.sitofp %ii : i64 to f64
    memref.store %f, %x[%i] : memref<?xf64>
  }
  %odd = memref.subview %x[1] [3] [2] : memref<?xf64> to memref<3xf64, strided<[2], offset: 1>>
  %c3 = arith.constant 3 : index
  %sum = scf.for %i = %c0 to %c3 step %c1 iter_args(%acc = %z) -> (f64) {
    %v = memref.load %odd[%i] : memref<3xf64, strided<[2], offset: 1>>
    %a = arith.addf %acc, %v : f64
    scf.yield %a : f64
  }
  // CHECK-NEXT: sum(x[1::2]) = 9
  printf.print_format "sum(x[1::2]) = {}\n", %sum : f64
  // scf.if with a result, a call, and a while loop halving until < 1
  %big = arith.cmpf ogt, %sum, %two : f64
  %w = scf.if %big -> (f64) {
    %q = func.call @square(%sum) : (f64) -> f64
    scf.yield %q : f64
  } else {
    scf.yield %z : f64
  }
  %k:2 = scf.while (%v = %w, %n = %c0) : (f64, index) -> (f64, index) {
    %go = arith.cmpf oge, %v, %one : f64
    scf.condition(%go) %v, %n : f64, index
  } do {
  ^bb0(%v2: f64, %n2: index):
    %h = arith.mulf %v2, %half : f64
    %n3 = arith.addi %n2, %c1 : index
    scf.yield %h, %n3 : f64, index
  }
  // CHECK-NEXT: square = 81 halvings = 7 last = 0.632812
  printf.print_format "square = {} halvings = {} last = {}\n", %w : f64, %k#1 : index, %k#0 : f64
  memref.dealloc %x : memref<?xf64>
  func.return
}
