// RUN: ad-opt %s --reverse --cache-policy=tape-all | filecheck %s
// scf.if inside a loop: the reverse is an scf.if on the same (taped)
// condition; each branch reverses its own block and yields the adjoints of
// outer values it changed (x[i] and the scalar %w); pushes inside a branch
// are popped inside the same branch of the reverse, keeping the tape LIFO.

// CHECK-LABEL: func.func @branchy_grad_da_a
// CHECK:         %tape_pos = memref.alloc(%{{.*}}) {ad.workspace} : memref<?xi1>
// CHECK:         %v = scf.if %pos -> (f64) {
// CHECK-NEXT:      %e = math.exp %a : f64
// CHECK:           memref.store %e, %tape_e
// CHECK:         scf.for
// CHECK:           %[[COND:.*]] = memref.load %tape_pos[%{{.*}}] {ad.unchecked} : memref<?xi1>
// CHECK:           %[[A:.*]] = memref.load %tape_a
// CHECK:           %[[DA:.*]], %[[DW:.*]] = scf.if %[[COND]] -> (f64, f64) {
// CHECK:             %[[E:.*]] = memref.load %tape_e
// CHECK:             scf.yield %{{.*}}, %{{.*}} : f64, f64
// CHECK-NEXT:      } else {
// CHECK-NEXT:        %[[G:.*]] = arith.mulf %{{.*}}, %[[A]] : f64
// CHECK-NEXT:        %[[G2:.*]] = arith.addf %[[G]], %[[G]] : f64
// CHECK-NEXT:        scf.yield %[[G2]], %{{.*}} : f64, f64
// CHECK-NEXT:      }
// CHECK:           memref.store %{{.*}}, %dx[%{{.*}}] {ad.twin_of = {{[0-9]+}} : i64, ad.unchecked} : memref<?xf64>
// CHECK-NEXT:      scf.yield %{{.*}}, %[[DW]] : f64, f64

func.func @branchy(%x: memref<?xf64>, %w: f64) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f64
  %n = memref.dim %x, %c0 : memref<?xf64>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (f64) {
    %a = memref.load %x[%i] : memref<?xf64>
    %pos = arith.cmpf ogt, %a, %z : f64
    %v = scf.if %pos -> (f64) {
      %e = math.exp %a : f64
      %m = arith.mulf %e, %w : f64
      scf.yield %m : f64
    } else {
      %m = arith.mulf %a, %a : f64
      scf.yield %m : f64
    }
    %s = arith.addf %acc, %v : f64
    scf.yield %s : f64
  }
  func.return %r : f64
}
func.func @main(%x: memref<?xf64>, %dx: memref<?xf64>, %w: f64) -> f64 {
  %one = arith.constant 1.0 : f64
  %h = ad.autodiff @branchy(%x, %dx, %w, %one) {activity = [dup, active], ret_activity = [active]} : (memref<?xf64>, memref<?xf64>, f64, f64) -> f64
  func.return %h : f64
}
