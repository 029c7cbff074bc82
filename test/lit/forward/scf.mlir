// RUN: ad-opt -p ad-forward %s | filecheck %s
// scf.for / scf.if / scf.while carry the tangents of the values they carry
// that carry derivatives (appended after their own); a counter (%cnt) that
// depends on no input gets none; a branch yielding a constant yields a
// zero tangent.

func.func @loops(%x: memref<?xf64>, %w: f64) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f64
  %one = arith.constant 1.0 : f64
  %n = memref.dim %x, %c0 : memref<?xf64>
  %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z, %cnt = %z) -> (f64, f64) {
    %a = memref.load %x[%i] : memref<?xf64>
    %pos = arith.cmpf ogt, %a, %z : f64
    %v = scf.if %pos -> (f64) {
      %e = math.exp %a : f64
      scf.yield %e : f64
    } else {
      scf.yield %w : f64
    }
    %s = arith.addf %acc, %v : f64
    %c2 = arith.addf %cnt, %one : f64
    scf.yield %s, %c2 : f64, f64
  }
  %h = scf.while (%u = %r#0) : (f64) -> f64 {
    %big = arith.cmpf ogt, %u, %one : f64
    scf.condition(%big) %u : f64
  } do {
  ^bb0(%u2: f64):
    %u3 = math.sqrt %u2 : f64
    scf.yield %u3 : f64
  }
  %res = arith.mulf %h, %r#1 : f64
  func.return %res : f64
}
func.func @main(%x: memref<?xf64>, %dx: memref<?xf64>, %w: f64) -> (f64, f64) {
  %r:2 = ad.fwddiff @loops(%x, %dx, %w) {activity = [dup, const], ret_activity = [dup]} : (memref<?xf64>, memref<?xf64>, f64) -> (f64, f64)
  func.return %r#0, %r#1 : f64, f64
}

// CHECK-LABEL: func.func @loops_fwd_dc_d(%x: memref<?xf64>, %dx: memref<?xf64>, %w: f64) -> (f64, f64) {
// CHECK:         %r, %r_1, %dr = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z, %cnt = %z, %dacc = %z) -> (f64, f64, f64) {
// CHECK-NEXT:      %a = memref.load %x[%i]
// CHECK-NEXT:      %da = memref.load %dx[%i]
// CHECK-NEXT:      %pos = arith.cmpf ogt, %a, %z : f64
// CHECK-NEXT:      %v, %dv = scf.if %pos -> (f64, f64) {
// CHECK-NEXT:        %e = math.exp %a : f64
// CHECK-NEXT:        %de = arith.mulf %da, %e : f64
// CHECK-NEXT:        scf.yield %e, %de : f64, f64
// CHECK-NEXT:      } else {
// CHECK-NEXT:        scf.yield %w, %z : f64, f64
// CHECK-NEXT:      }
// CHECK-NEXT:      %s = arith.addf %acc, %v : f64
// CHECK-NEXT:      %ds = arith.addf %dacc, %dv : f64
// CHECK-NEXT:      %c2 = arith.addf %cnt, %one : f64
// CHECK-NEXT:      scf.yield %s, %c2, %ds : f64, f64, f64
// CHECK-NEXT:    }
// CHECK-NEXT:    %h, %dh = scf.while (%u = %r, %du = %dr) : (f64, f64) -> (f64, f64) {
// CHECK-NEXT:      %big = arith.cmpf ogt, %u, %one : f64
// CHECK-NEXT:      scf.condition(%big) %u, %du : f64, f64
// CHECK-NEXT:    } do {
// CHECK-NEXT:    ^bb0(%u2: f64, %du2: f64):
// CHECK-NEXT:      %u3 = math.sqrt %u2 : f64
// CHECK-NEXT:      %[[HALF:.*]] = arith.constant 5.000000e-01 : f64
// CHECK-NEXT:      %[[T:.*]] = arith.mulf %du2, %[[HALF]] : f64
// CHECK-NEXT:      %du3 = arith.divf %[[T]], %u3 : f64
// CHECK-NEXT:      scf.yield %u3, %du3 : f64, f64
// CHECK-NEXT:    }
// CHECK-NEXT:    %res = arith.mulf %h, %r_1 : f64
// CHECK-NEXT:    %dres = arith.mulf %dh, %r_1 : f64
// CHECK-NEXT:    func.return %res, %dres : f64, f64
