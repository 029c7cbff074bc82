// RUN: ad-opt %s --reverse --no-loop-local --print-cache-report 2>&1 >/dev/null | filecheck %s
// Why a value that could be recomputed is taped: the report names what the
// best plan that recomputes it instead would cost, item by item, and that
// cost is above the tape's bytes (issue 13: the reason once read "recomputing
// arith.addf costs more than taping 8 bytes (recompute cost 0.01)").

// An add of a loop-carried value: recomputing it needs the carried value,
// which would have to be taped itself.
// CHECK-LABEL: cache report for @carried_grad_d_a
// CHECK:       tape      %u {{.*}}arith.addf: cost model: taping it costs 8 bytes per iteration; recomputing it instead would cost 8.26 per iteration: tape %s (8 bytes; loop-carried value (iter_arg of scf.for)), reload %a (0.25), recompute arith.addf (0.01)
// CHECK:       taped bytes: 8*(dim(x, 0))
func.func @carried(%x: memref<?xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %half = arith.constant 0.5 : f64
  %n = memref.dim %x, %c0 : memref<?xf64>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%s = %half) -> (f64) {
    %a = memref.load %x[%i] : memref<?xf64>
    %u = arith.addf %s, %a : f64
    %v = arith.mulf %u, %u : f64
    scf.yield %v : f64
  }
  func.return %r : f64
}

// f32: taping costs 4 bytes. %p is taped: recomputing it costs a division
// (4) and a reload (0.25). %q = %p / %b is then recomputed from the tape
// (4, as much as taping it), and the exp of %q costs 16 to recompute.
// CHECK-LABEL: cache report for @divisions_grad_dd_a
// CHECK:       tape      %p {{.*}}arith.divf: cost model: taping it costs 4 bytes per iteration; recomputing it instead would cost 4.25 per iteration: reload %a (0.25), recompute arith.divf (4)
// CHECK:       recompute %q {{.*}}arith.divf: arith.divf of values available in the reverse sweep
// CHECK:       tape      %e {{.*}}math.exp: cost model: taping it costs 4 bytes per iteration; recomputing it instead would cost 16 per iteration: recompute math.exp (16)
// CHECK:       taped bytes: 4*(dim(x, 0)) + 4*(dim(x, 0))
func.func @divisions(%x: memref<?xf32>, %y: memref<?xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f32
  %n = memref.dim %x, %c0 : memref<?xf32>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (f32) {
    %a = memref.load %x[%i] : memref<?xf32>
    %b = memref.load %y[%i] : memref<?xf32>
    %p = arith.divf %a, %b : f32
    %q = arith.divf %p, %b : f32
    %e = math.exp %q : f32
    %s = arith.addf %acc, %e : f32
    scf.yield %s : f32
  }
  func.return %r : f32
}

func.func @main(%x: memref<?xf64>, %dx: memref<?xf64>, %a: memref<?xf32>, %da: memref<?xf32>,
                %b: memref<?xf32>, %db: memref<?xf32>) {
  %s = arith.constant 1.0 : f64
  %t = arith.constant 1.0 : f32
  ad.autodiff @carried(%x, %dx, %s) {activity = [dup], ret_activity = [active]} : (memref<?xf64>, memref<?xf64>, f64) -> ()
  ad.autodiff @divisions(%a, %da, %b, %db, %t) {activity = [dup, dup], ret_activity = [active]} : (memref<?xf32>, memref<?xf32>, memref<?xf32>, memref<?xf32>, f32) -> ()
  func.return
}
