// RUN: ad-opt %s --reverse | filecheck %s --check-prefix=GRAD
// RUN: ad-run %s | filecheck %s
// math.asinh/acosh/atanh (op-table entries, adpasses/ops/math.py): their
// gradients built by ad-opt, and run: d asinh = 1/sqrt(x^2 + 1),
// d acosh = 1/sqrt(x^2 - 1), d atanh = 1/(1 - x^2).

// The partials read the operand, not the result: the gradient recomputes no
// asinh/acosh/atanh (the forward values are dead), and g * (1/d) folds to g / d.
// GRAD-LABEL: func.func @f_grad_a_a(%x: f64, %seed: f64) -> f64
// GRAD-NOT:     math.a{{.*}}h
// GRAD:         %[[Y2:.*]] = arith.mulf %y, %y : f64
// GRAD-NEXT:    %[[ONE:.*]] = arith.constant 1.000000e+00 : f64
// GRAD-NEXT:    %[[YM1:.*]] = arith.subf %[[Y2]], %[[ONE]] : f64
// GRAD-NEXT:    %[[SY:.*]] = math.sqrt %[[YM1]] : f64
// GRAD-NEXT:    arith.divf %seed, %[[SY]] : f64
// GRAD-NEXT:    %[[X2:.*]] = arith.mulf %x, %x : f64
// GRAD-NEXT:    %[[OMX:.*]] = arith.subf %[[ONE]], %[[X2]] : f64
// GRAD-NEXT:    arith.divf %seed, %[[OMX]] : f64
// GRAD:         %[[XP1:.*]] = arith.addf %[[X2]], %[[ONE]] : f64
// GRAD-NEXT:    %[[SX:.*]] = math.sqrt %[[XP1]] : f64
// GRAD-NEXT:    arith.divf %seed, %[[SX]] : f64
// GRAD:         func.return
// GRAD-LABEL: func.func @h_grad_d_a(
// GRAD:         scf.for
// GRAD:           %[[A:.*]] = memref.load %x
// GRAD:           %[[A2:.*]] = arith.mulf %[[A]], %[[A]] : f64
// GRAD-NEXT:      %[[AM1:.*]] = arith.subf %[[A2]], %{{.*}} : f64
// GRAD-NEXT:      math.sqrt %[[AM1]] : f64
func.func @f(%x: f64) -> f64 {
  %a = math.asinh %x : f64
  %b = math.atanh %x : f64
  %two = arith.constant 2.0 : f64
  %y = arith.addf %x, %two : f64
  %c = math.acosh %y : f64
  %s = arith.addf %a, %b : f64
  %r = arith.addf %s, %c : f64
  func.return %r : f64
}

func.func @h(%x: memref<?xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f64
  %n = memref.dim %x, %c0 : memref<?xf64>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (f64) {
    %a = memref.load %x[%i] : memref<?xf64>
    %c = math.acosh %a : f64
    %s = arith.addf %acc, %c : f64
    scf.yield %s : f64
  }
  func.return %r : f64
}

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %one = arith.constant 1.0 : f64
  %zero = arith.constant 0.0 : f64
  %half = arith.constant 0.5 : f64
  // 1/sqrt(1.25) + 1/0.75 + 1/sqrt(5.25) = 0.894427 + 1.333333 + 0.436436
  %d = ad.autodiff @f(%half, %one) {activity = [active], ret_activity = [active]} : (f64, f64) -> f64
  // CHECK: df = 2.6642
  printf.print_format "df = {}\n", %d : f64
  %x = memref.alloc(%c3) : memref<?xf64>
  %dx = memref.alloc(%c3) : memref<?xf64>
  %v0 = arith.constant 1.5 : f64
  %v1 = arith.constant 2.0 : f64
  %v2 = arith.constant 3.0 : f64
  memref.store %v0, %x[%c0] : memref<?xf64>
  memref.store %v1, %x[%c1] : memref<?xf64>
  memref.store %v2, %x[%c2] : memref<?xf64>
  scf.for %i = %c0 to %c3 step %c1 {
    memref.store %zero, %dx[%i] : memref<?xf64>
  }
  ad.autodiff @h(%x, %dx, %one) {activity = [dup], ret_activity = [active]} : (memref<?xf64>, memref<?xf64>, f64) -> ()
  %d0 = memref.load %dx[%c0] : memref<?xf64>
  %d1 = memref.load %dx[%c1] : memref<?xf64>
  %d2 = memref.load %dx[%c2] : memref<?xf64>
  // 1/sqrt(1.25), 1/sqrt(3), 1/sqrt(8)
  // CHECK-NEXT: dx = 0.894427 0.57735 0.353553
  printf.print_format "dx = {} {} {}\n", %d0 : f64, %d1 : f64, %d2 : f64
  memref.dealloc %x : memref<?xf64>
  memref.dealloc %dx : memref<?xf64>
  func.return
}
