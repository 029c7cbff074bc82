// RUN: ad-opt %s --forward | filecheck %s --check-prefix=IR
// RUN: ad-run %s | filecheck %s
// Enzyme-MLIR ForwardMode/memref_if.mlir: a local buffer initialised with a
// constant and overwritten with an active value under a condition. The
// shadow buffer must be zero-initialised: on the path that does not store,
// the tangent read back is 0, not whatever the allocation held.
// Hand derivation: res = 2*mem; c true: mem = x*x, dres = 4*x*dx;
// c false: mem = 2, dres = 0. At x = 1.5, dx = 2: 12 and 0.

// IR-LABEL: func.func @if_then_fwd_dc_n(
// IR:         %[[MEM:.*]] = memref.alloc() : memref<1xf64>
// IR-NEXT:    %[[DMEM:.*]] = memref.alloc() : memref<1xf64>
// IR-NEXT:    %[[Z:.*]] = arith.constant 0.000000e+00 : f64
// IR-NEXT:    memref.store %[[Z]], %[[DMEM]][%{{.*}}] : memref<1xf64>
// IR:         scf.if
// IR:           memref.store %{{.*}}, %[[MEM]]
// IR-NEXT:      memref.store %{{.*}}, %[[DMEM]]
// IR:         %[[DR:.*]] = memref.load %[[DMEM]]
// IR-NEXT:    %[[DRES:.*]] = arith.mulf %[[DR]], %{{.*}} : f64

func.func @if_then(%x: f64, %c: i1) -> f64 {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2.0 : f64
  %mem = memref.alloc() : memref<1xf64>
  memref.store %c2, %mem[%c0] : memref<1xf64>
  scf.if %c {
    %mul = arith.mulf %x, %x : f64
    memref.store %mul, %mem[%c0] : memref<1xf64>
  }
  %r = memref.load %mem[%c0] : memref<1xf64>
  %res = arith.mulf %c2, %r : f64
  memref.dealloc %mem : memref<1xf64>
  func.return %res : f64
}

func.func @main() {
  %x = arith.constant 1.5 : f64
  %dx = arith.constant 2.0 : f64
  %t = arith.constant true
  %f = arith.constant false
  %a = ad.fwddiff @if_then(%x, %dx, %t) {activity = [dup, const], ret_activity = [dupnoneed]} : (f64, f64, i1) -> f64
  %b = ad.fwddiff @if_then(%x, %dx, %f) {activity = [dup, const], ret_activity = [dupnoneed]} : (f64, f64, i1) -> f64
  // CHECK: taken = 12 not taken = 0
  printf.print_format "taken = {} not taken = {}\n", %a : f64, %b : f64
  func.return
}
