// RUN: ad-opt %s --reverse --print-cache-report 2>&1 >/dev/null | filecheck %s --check-prefix=REPORT
// RUN: ad-opt %s --reverse 2>/dev/null | filecheck %s
// RUN: ad-run %s | filecheck %s --check-prefix=OUT
// Loop-local reverse (docs/parallel.md): a top-level loop whose iterations
// are independent is reversed one iteration at a time, inside its forward
// loop: no tape, one loop. The cache report gives each loop's decision.

// Independent iterations, a sum reduction: reversed in the forward loop.
// REPORT-LABEL: cache report for @sum_sq_grad_d_a
// REPORT:       taped bytes: 0
// REPORT-NEXT:  loop at {{.*}}loop_local.mlir:{{[0-9]+}}:3: loop-local reverse: iterations independent (alias analysis): each iteration reversed right after its forward
// The gradient has one loop: the forward iteration, then its reverse
// (dx[i] += 2 x[i] seed, the seed read in the loop), nothing after it.
// CHECK-LABEL: func.func @sum_sq_grad_d_a(
// CHECK-SAME:    %[[SEED:[a-z0-9_]+]]: f64)
// CHECK:         scf.for
// CHECK:           %[[A:.*]] = memref.load %x[
// CHECK:           arith.mulf %[[SEED]], %[[A]]
// CHECK:           memref.load %dx[
// CHECK:           memref.store {{.*}}, %dx[
// CHECK:           scf.yield
// CHECK-NEXT:    }
// CHECK-NOT:     scf.for
// CHECK-NOT:     ad.tape
// CHECK:         func.return
func.func @sum_sq(%x: memref<?xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f64
  %n = memref.dim %x, %c0 : memref<?xf64>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (f64) {
    %a = memref.load %x[%i] : memref<?xf64>
    %p = arith.mulf %a, %a : f64
    %s = arith.addf %acc, %p : f64
    scf.yield %s : f64
  }
  func.return %r : f64
}

// A loop-carried dependence through memory (x[i] from x[i-1]): reversed
// after the forward loop, its values taped.
// REPORT-LABEL: cache report for @prefix_grad_d_a
// REPORT:       loop at {{.*}}loop_local.mlir:{{[0-9]+}}:3: reversed after the forward loop: iterations may depend on each other: store at {{.*}} (in an earlier iteration) may touch what memref.load at {{.*}} accesses: writes %x[%i], which may be %x[%i - 1]
func.func @prefix(%x: memref<?xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f64
  %n = memref.dim %x, %c0 : memref<?xf64>
  scf.for %i = %c1 to %n step %c1 {
    %k = arith.subi %i, %c1 : index
    %a = memref.load %x[%k] : memref<?xf64>
    %b = memref.load %x[%i] : memref<?xf64>
    %p = arith.mulf %a, %b : f64
    memref.store %p, %x[%i] : memref<?xf64>
  }
  %last = arith.subi %n, %c1 : index
  %r = memref.load %x[%last] : memref<?xf64>
  func.return %r : f64
}

// A product is not a sum reduction: each iteration's adjoint depends on the
// next.
// REPORT-LABEL: cache report for @product_grad_d_a
// REPORT:       loop at {{.*}}: reversed after the forward loop: loop-carried value %acc is not a sum reduction
func.func @product(%x: memref<?xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1.0 : f64
  %n = memref.dim %x, %c0 : memref<?xf64>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %one) -> (f64) {
    %a = memref.load %x[%i] : memref<?xf64>
    %s = arith.mulf %acc, %a : f64
    scf.yield %s : f64
  }
  func.return %r : f64
}

// The in-place square then its sum: ad-fuse-loops makes one loop of the
// two, reversed locally.
// REPORT-LABEL: cache report for @square_then_sum_grad_d_a
// REPORT:       taped bytes: 0
// REPORT-NEXT:  loop at {{.*}}: loop-local reverse: iterations independent (alias analysis): each iteration reversed right after its forward (fused with the loop at {{.*}}loop_local.mlir:{{[0-9]+}}:3: ad-fuse-loops)
func.func @square_then_sum(%x: memref<?xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?xf64>
  scf.for %i = %c0 to %n step %c1 {
    %a = memref.load %x[%i] : memref<?xf64>
    %sq = arith.mulf %a, %a : f64
    memref.store %sq, %x[%i] : memref<?xf64>
  }
  %s = arith.constant 0.0 : f64
  %r = scf.for %j = %c0 to %n step %c1 iter_args(%acc = %s) -> (f64) {
    %b = memref.load %x[%j] : memref<?xf64>
    %acc2 = arith.addf %acc, %b : f64
    scf.yield %acc2 : f64
  }
  func.return %r : f64
}

// Hand derivation at x = (1.5, -2, 0.5): d/dx sum x^2 = 2x; 2x for the
// in-place square's sum; the prefix product's last element and the product
// are both x0 x1 x2: (x1 x2, x0 x2, x0 x1).
func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %zero = arith.constant 0.0 : f64
  %seed = arith.constant 1.0 : f64
  %v1 = arith.constant 1.5 : f64
  %v2 = arith.constant -2.0 : f64
  %v3 = arith.constant 0.5 : f64
  %x = memref.alloc() : memref<3xf64>
  %dx = memref.alloc() : memref<3xf64>
  %xd = memref.cast %x : memref<3xf64> to memref<?xf64>
  %dxd = memref.cast %dx : memref<3xf64> to memref<?xf64>
  memref.store %v1, %x[%c0] : memref<3xf64>
  memref.store %v2, %x[%c1] : memref<3xf64>
  memref.store %v3, %x[%c2] : memref<3xf64>
  memref.store %zero, %dx[%c0] : memref<3xf64>
  memref.store %zero, %dx[%c1] : memref<3xf64>
  memref.store %zero, %dx[%c2] : memref<3xf64>
  ad.autodiff @sum_sq(%xd, %dxd, %seed) {activity = [dup], ret_activity = [active]} : (memref<?xf64>, memref<?xf64>, f64) -> ()
  // OUT: sum_sq: 3 -4 1
  %a0 = memref.load %dx[%c0] : memref<3xf64>
  %a1 = memref.load %dx[%c1] : memref<3xf64>
  %a2 = memref.load %dx[%c2] : memref<3xf64>
  "printf.print_format"(%a0, %a1, %a2) {format_str = "sum_sq: {} {} {}\0A"} : (f64, f64, f64) -> ()
  memref.store %zero, %dx[%c0] : memref<3xf64>
  memref.store %zero, %dx[%c1] : memref<3xf64>
  memref.store %zero, %dx[%c2] : memref<3xf64>
  memref.store %v1, %x[%c0] : memref<3xf64>
  memref.store %v2, %x[%c1] : memref<3xf64>
  memref.store %v3, %x[%c2] : memref<3xf64>
  memref.store %zero, %dx[%c0] : memref<3xf64>
  memref.store %zero, %dx[%c1] : memref<3xf64>
  memref.store %zero, %dx[%c2] : memref<3xf64>
  ad.autodiff @prefix(%xd, %dxd, %seed) {activity = [dup], ret_activity = [active]} : (memref<?xf64>, memref<?xf64>, f64) -> ()
  // OUT: prefix: -1 0.75 -3
  %c0v = memref.load %dx[%c0] : memref<3xf64>
  %c1v = memref.load %dx[%c1] : memref<3xf64>
  %c2v = memref.load %dx[%c2] : memref<3xf64>
  "printf.print_format"(%c0v, %c1v, %c2v) {format_str = "prefix: {} {} {}\0A"} : (f64, f64, f64) -> ()
  memref.store %v1, %x[%c0] : memref<3xf64>
  memref.store %v2, %x[%c1] : memref<3xf64>
  memref.store %v3, %x[%c2] : memref<3xf64>
  memref.store %zero, %dx[%c0] : memref<3xf64>
  memref.store %zero, %dx[%c1] : memref<3xf64>
  memref.store %zero, %dx[%c2] : memref<3xf64>
  ad.autodiff @product(%xd, %dxd, %seed) {activity = [dup], ret_activity = [active]} : (memref<?xf64>, memref<?xf64>, f64) -> ()
  // OUT: product: -1 0.75 -3
  %d0v = memref.load %dx[%c0] : memref<3xf64>
  %d1v = memref.load %dx[%c1] : memref<3xf64>
  %d2v = memref.load %dx[%c2] : memref<3xf64>
  "printf.print_format"(%d0v, %d1v, %d2v) {format_str = "product: {} {} {}\0A"} : (f64, f64, f64) -> ()
  memref.store %v1, %x[%c0] : memref<3xf64>
  memref.store %v2, %x[%c1] : memref<3xf64>
  memref.store %v3, %x[%c2] : memref<3xf64>
  memref.store %zero, %dx[%c0] : memref<3xf64>
  memref.store %zero, %dx[%c1] : memref<3xf64>
  memref.store %zero, %dx[%c2] : memref<3xf64>
  ad.autodiff @square_then_sum(%xd, %dxd, %seed) {activity = [dup], ret_activity = [active]} : (memref<?xf64>, memref<?xf64>, f64) -> ()
  // OUT: square_then_sum: 3 -4 1
  %b0 = memref.load %dx[%c0] : memref<3xf64>
  %b1 = memref.load %dx[%c1] : memref<3xf64>
  %b2 = memref.load %dx[%c2] : memref<3xf64>
  "printf.print_format"(%b0, %b1, %b2) {format_str = "square_then_sum: {} {} {}\0A"} : (f64, f64, f64) -> ()
  func.return
}
