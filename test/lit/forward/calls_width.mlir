// RUN: ad-opt -p ad-forward %s | filecheck %s
// Calls are inlined (transitively) into the copy that is differentiated;
// width = 2 (vector mode): two tangents per dup argument, each of the
// primal's type, in lane order; the partials are shared by the lanes
// (one %v for both products), each lane has its own tangent loads/stores.

func.func @sq(%a: f64) -> f64 {
  %r = arith.mulf %a, %a : f64
  func.return %r : f64
}
func.func @scale(%m: memref<?xf64>, %s: f64) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %m, %c0 : memref<?xf64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %m[%i] : memref<?xf64>
    %w = func.call @sq(%v) : (f64) -> f64
    %u = arith.mulf %w, %s : f64
    memref.store %u, %m[%i] : memref<?xf64>
  }
  func.return
}
func.func @f(%m: memref<?xf64>, %s: f64) {
  func.call @scale(%m, %s) : (memref<?xf64>, f64) -> ()
  func.return
}
func.func @main(%m: memref<?xf64>, %d0: memref<?xf64>, %d1: memref<?xf64>, %s: f64, %t0: f64, %t1: f64) {
  ad.fwddiff @f(%m, %d0, %d1, %s, %t0, %t1) {activity = [dup, dup], ret_activity = [], width = 2} : (memref<?xf64>, memref<?xf64>, memref<?xf64>, f64, f64, f64) -> ()
  func.return
}

// CHECK-LABEL: func.func @f_fwd_dd__w2(%m: memref<?xf64>, %dm: memref<?xf64>, %dm_1: memref<?xf64>, %s: f64, %ds: f64, %ds_1: f64) {
// CHECK-NEXT:    ad.shadow_check %m, %dm : memref<?xf64>, memref<?xf64>
// CHECK-NEXT:    ad.shadow_check %m, %dm_1 : memref<?xf64>, memref<?xf64>
// CHECK-NOT:     func.call
// CHECK:         scf.for %i = %c0 to %n step %c1 {
// CHECK-NEXT:      %v = memref.load %m[%i]
// CHECK-NEXT:      %dv = memref.load %dm[%i]
// CHECK-NEXT:      %dv_1 = memref.load %dm_1[%i]
// CHECK-NEXT:      %r = arith.mulf %v, %v : f64
// CHECK-NEXT:      %[[A:.*]] = arith.mulf %dv, %v : f64
// CHECK-NEXT:      %dr = arith.addf %[[A]], %[[A]] : f64
// CHECK-NEXT:      %[[B:.*]] = arith.mulf %dv_1, %v : f64
// CHECK-NEXT:      %dr_1 = arith.addf %[[B]], %[[B]] : f64
// CHECK-NEXT:      %u = arith.mulf %r, %s : f64
// CHECK-NEXT:      %[[C:.*]] = arith.mulf %dr, %s : f64
// CHECK-NEXT:      %[[D:.*]] = arith.mulf %ds, %r : f64
// CHECK-NEXT:      %du = arith.addf %[[C]], %[[D]] : f64
// CHECK-NEXT:      %[[E:.*]] = arith.mulf %dr_1, %s : f64
// CHECK-NEXT:      %[[F:.*]] = arith.mulf %ds_1, %r : f64
// CHECK-NEXT:      %du_1 = arith.addf %[[E]], %[[F]] : f64
// CHECK-NEXT:      memref.store %u, %m[%i]
// CHECK-NEXT:      memref.store %du, %dm[%i]
// CHECK-NEXT:      memref.store %du_1, %dm_1[%i]
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return
// CHECK-LABEL: func.func @main
// CHECK-NEXT:    func.call @f_fwd_dd__w2(%m, %d0, %d1, %s, %t0, %t1)
