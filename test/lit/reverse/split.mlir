// Split mode written as ad.autodiff ops: the forward half returns the
// primal result and an !ad.split_tape, the reverse half takes the shadow,
// the seed and the tape. g(x, a) = sum_i sin(y_i) * a with y = x * x a
// local heap array the reverse reads back (it frees it, not the forward
// half), in a loop whose values are taped. At x = (1.5, -2, 0.25), a = 0.5
// the split gradient must print what the combined one prints, and central
// differences (h = 1e-6) of g in every x_i and in a must agree to 1e-7.
// RUN: ad-opt %s --reverse | ad-run | filecheck %s
// CHECK: split [[G:.*]]
// CHECK-NEXT: combined [[G]]
// CHECK-NEXT: finite differences agree
// RUN: ad-opt %s --reverse | filecheck %s --check-prefix=IR
// IR-LABEL: func.func @g_grad_da_a_s_aug(%x: memref<?xf64>, %a: f64) -> (f64, memref<?xf64>, index, index, memref<1xindex>, memref<?xf64>, memref<?xf64>, f64) {
// IR:         %y = memref.alloc(%n) : memref<?xf64>
// IR-NOT:     memref.dealloc
// IR:         func.return %s, %x, %n, %{{.*}}, %{{.*}}, %tape_e, %y, %a : f64, memref<?xf64>, index, index, memref<1xindex>, memref<?xf64>, memref<?xf64>, f64
// IR-LABEL: func.func @g_grad_da_a_s_rev(%dx: memref<?xf64>, %seed: f64, %x: memref<?xf64>, %n: index, %{{.*}}: index, %{{.*}}: memref<1xindex>, %tape_e: memref<?xf64>, %y: memref<?xf64>, %a: f64) -> f64 {
// IR:         ad.shadow_check %x, %dx : memref<?xf64>, memref<?xf64>
// IR:         memref.dealloc %tape_e : memref<?xf64>
// IR:         memref.dealloc %y : memref<?xf64>
// IR-LABEL: func.func @split(
// IR-NEXT:    %one = arith.constant
// IR-NEXT:    %s, %0, %1, %2, %3, %4, %5, %6 = func.call @g_grad_da_a_s_aug(%x, %a)
// IR-NEXT:    %da = func.call @g_grad_da_a_s_rev(%dx, %one, %0, %1, %2, %3, %4, %5, %6)

func.func @g(%x: memref<?xf64>, %a: f64) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?xf64>
  %y = memref.alloc(%n) : memref<?xf64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %x[%i] : memref<?xf64>
    %t = arith.mulf %v, %v : f64
    memref.store %t, %y[%i] : memref<?xf64>
  }
  %z = arith.constant 0.0 : f64
  %s = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (f64) {
    %w = memref.load %y[%i] : memref<?xf64>
    %e = math.sin %w : f64
    %p = arith.mulf %e, %a : f64
    %r = arith.addf %acc, %p : f64
    scf.yield %r : f64
  }
  memref.dealloc %y : memref<?xf64>
  func.return %s : f64
}
func.func @split(%x: memref<?xf64>, %dx: memref<?xf64>, %a: f64) -> f64 {
  %one = arith.constant 1.0 : f64
  %s, %t = ad.autodiff @g(%x, %a) {activity = [dup, active], ret_activity = [active], split = forward}
    : (memref<?xf64>, f64) -> (f64, !ad.split_tape)
  %da = ad.autodiff @g(%dx, %one, %t) {activity = [dup, active], ret_activity = [active], split = reverse}
    : (memref<?xf64>, f64, !ad.split_tape) -> f64
  func.return %da : f64
}
func.func @combined(%x: memref<?xf64>, %dx: memref<?xf64>, %a: f64) -> f64 {
  %one = arith.constant 1.0 : f64
  %da = ad.autodiff @g(%x, %dx, %a, %one) {activity = [dup, active], ret_activity = [active]}
    : (memref<?xf64>, memref<?xf64>, f64, f64) -> f64
  func.return %da : f64
}
func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %x = memref.alloc(%c3) : memref<?xf64>
  %dx = memref.alloc(%c3) : memref<?xf64>
  %v0 = arith.constant 1.5 : f64
  %v1 = arith.constant -2.0 : f64
  %v2 = arith.constant 0.25 : f64
  %zero = arith.constant 0.0 : f64
  %a = arith.constant 0.5 : f64
  memref.store %v0, %x[%c0] : memref<?xf64>
  memref.store %v1, %x[%c1] : memref<?xf64>
  memref.store %v2, %x[%c2] : memref<?xf64>
  scf.for %i = %c0 to %c3 step %c1 {
    memref.store %zero, %dx[%i] : memref<?xf64>
  }
  %da = func.call @split(%x, %dx, %a) : (memref<?xf64>, memref<?xf64>, f64) -> f64
  %g0 = memref.load %dx[%c0] : memref<?xf64>
  %g1 = memref.load %dx[%c1] : memref<?xf64>
  %g2 = memref.load %dx[%c2] : memref<?xf64>
  printf.print_format "split {} {} {} {}\n", %g0 : f64, %g1 : f64, %g2 : f64, %da : f64
  scf.for %i = %c0 to %c3 step %c1 {
    memref.store %zero, %dx[%i] : memref<?xf64>
  }
  %db = func.call @combined(%x, %dx, %a) : (memref<?xf64>, memref<?xf64>, f64) -> f64
  %h0 = memref.load %dx[%c0] : memref<?xf64>
  %h1 = memref.load %dx[%c1] : memref<?xf64>
  %h2 = memref.load %dx[%c2] : memref<?xf64>
  printf.print_format "combined {} {} {} {}\n", %h0 : f64, %h1 : f64, %h2 : f64, %db : f64
  // Central differences: in a, then in each x_i (restored after).
  %h = arith.constant 1.0e-6 : f64
  %h2x = arith.addf %h, %h : f64
  %tol = arith.constant 1.0e-7 : f64
  %ap = arith.addf %a, %h : f64
  %am = arith.subf %a, %h : f64
  %fp = func.call @g(%x, %ap) : (memref<?xf64>, f64) -> f64
  %fm = func.call @g(%x, %am) : (memref<?xf64>, f64) -> f64
  %d = arith.subf %fp, %fm : f64
  %fd = arith.divf %d, %h2x : f64
  %e = arith.subf %fd, %da : f64
  %ea = math.absf %e : f64
  %worst = scf.for %i = %c0 to %c3 step %c1 iter_args(%m = %ea) -> (f64) {
    %xi = memref.load %x[%i] : memref<?xf64>
    %xp = arith.addf %xi, %h : f64
    memref.store %xp, %x[%i] : memref<?xf64>
    %gp = func.call @g(%x, %a) : (memref<?xf64>, f64) -> f64
    %xm = arith.subf %xi, %h : f64
    memref.store %xm, %x[%i] : memref<?xf64>
    %gm = func.call @g(%x, %a) : (memref<?xf64>, f64) -> f64
    memref.store %xi, %x[%i] : memref<?xf64>
    %dg = arith.subf %gp, %gm : f64
    %fdi = arith.divf %dg, %h2x : f64
    %gi = memref.load %dx[%i] : memref<?xf64>
    %ei = arith.subf %fdi, %gi : f64
    %ai = math.absf %ei : f64
    %m2 = arith.maximumf %m, %ai : f64
    scf.yield %m2 : f64
  }
  %ok = arith.cmpf olt, %worst, %tol : f64
  scf.if %ok {
    printf.print_format "finite differences agree\n"
  } else {
    printf.print_format "finite differences differ by {}\n", %worst : f64
  }
  memref.dealloc %x : memref<?xf64>
  memref.dealloc %dx : memref<?xf64>
  func.return
}
