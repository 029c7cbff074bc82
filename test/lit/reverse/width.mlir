// RUN: ad-opt %s --reverse --no-loop-local | filecheck %s --check-prefix=IR
// RUN: ad-run %s | filecheck %s
// RUN: ad-opt %s | filecheck %s --check-prefix=ROUND
// Vector reverse mode: ad.autodiff {width = 2}, two cotangents per sweep.
// r = sum_i c * sin(x[i]) * x[i]: dr/dx[i] = c * (cos(x[i]) x[i] + sin(x[i])),
// dr/dc = sum_i sin(x[i]) x[i]. Lane k is seeded with s_k, so lane k holds
// s_k times the gradient: one forward sweep, one tape, one reverse loop that
// carries both lanes' adjoints of c.
// x = (0, 1, 2), c = 0.5, seeds (1, -2):
//   dr/dx = 0.5 * (0, cos1 + sin1, 2 cos2 + sin2) = (0, 0.6908866, 0.03850188)
//   dr/dc = sin1 + 2 sin2 = 2.6600658

// ROUND: ad.autodiff @f(%x, %d0, %d1, %half, %s0, %s1) {activity = [dup, active], ret_activity = [active], width = 2} : (memref<?xf64>, memref<?xf64>, memref<?xf64>, f64, f64, f64) -> (f64, f64)

// IR-LABEL: func.func @f_grad_da_a_w2(
// IR-SAME:    %x: memref<?xf64>, %[[D0:[a-z0-9_]+]]: memref<?xf64>, %[[D1:[a-z0-9_]+]]: memref<?xf64>, %c: f64, %[[S0:[a-z0-9_]+]]: f64, %[[S1:[a-z0-9_]+]]: f64) -> (f64, f64)
// IR:         ad.shadow_check %x, %[[D0]]
// IR:         ad.shadow_check %x, %[[D1]]
// IR:         math.sin
// IR-NOT:     math.sin
// The reverse loop carries, per lane, the adjoint of the sum and of c.
// IR:         scf.for {{.*}} -> (f64, f64, f64, f64) {
// IR:           memref.load %tape_s
// IR:           memref.load %[[D0]]
// IR:           memref.store {{.*}}, %[[D0]]
// IR:           memref.load %[[D1]]
// IR:           memref.store {{.*}}, %[[D1]]
// IR:           scf.yield {{.*}} : f64, f64, f64, f64
// IR-NOT:     scf.for
// IR:         func.return %{{.*}}, %{{.*}} : f64, f64
// IR:       func.call @f_grad_da_a_w2(%x, %d0, %d1, %half, %s0, %s1)

func.func @f(%x: memref<?xf64>, %c: f64) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f64
  %n = memref.dim %x, %c0 : memref<?xf64>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (f64) {
    %a = memref.load %x[%i] : memref<?xf64>
    %s = math.sin %a : f64
    %p = arith.mulf %s, %a : f64
    %q = arith.mulf %c, %p : f64
    %t = arith.addf %acc, %q : f64
    scf.yield %t : f64
  }
  func.return %r : f64
}

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %zero = arith.constant 0.0 : f64
  %half = arith.constant 0.5 : f64
  %s0 = arith.constant 1.0 : f64
  %s1 = arith.constant -2.0 : f64
  %x = memref.alloc(%c3) : memref<?xf64>
  %d0 = memref.alloc(%c3) : memref<?xf64>
  %d1 = memref.alloc(%c3) : memref<?xf64>
  scf.for %i = %c0 to %c3 step %c1 {
    %ii = arith.index_cast %i : index to i64
    %f = arith.sitofp %ii : i64 to f64
    memref.store %f, %x[%i] : memref<?xf64>
    memref.store %zero, %d0[%i] : memref<?xf64>
    memref.store %zero, %d1[%i] : memref<?xf64>
  }
  %dc:2 = ad.autodiff @f(%x, %d0, %d1, %half, %s0, %s1) {activity = [dup, active], ret_activity = [active], width = 2} : (memref<?xf64>, memref<?xf64>, memref<?xf64>, f64, f64, f64) -> (f64, f64)
  %a0 = memref.load %d0[%c0] : memref<?xf64>
  %a1 = memref.load %d0[%c1] : memref<?xf64>
  %a2 = memref.load %d0[%c2] : memref<?xf64>
  %b0 = memref.load %d1[%c0] : memref<?xf64>
  %b1 = memref.load %d1[%c1] : memref<?xf64>
  %b2 = memref.load %d1[%c2] : memref<?xf64>
  // CHECK: lane 0: dx = 0 0.690887 0.0385019 dc = 2.66007
  printf.print_format "lane 0: dx = {} {} {} dc = {}\n", %a0 : f64, %a1 : f64, %a2 : f64, %dc#0 : f64
  // CHECK-NEXT: lane 1: dx = {{-?}}0 -1.38177 -0.0770038 dc = -5.32013
  printf.print_format "lane 1: dx = {} {} {} dc = {}\n", %b0 : f64, %b1 : f64, %b2 : f64, %dc#1 : f64
  memref.dealloc %x : memref<?xf64>
  memref.dealloc %d0 : memref<?xf64>
  memref.dealloc %d1 : memref<?xf64>
  func.return
}
