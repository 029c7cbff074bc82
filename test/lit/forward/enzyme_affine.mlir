// RUN: ad-opt %s --forward | filecheck %s --check-prefix=IR
// RUN: ad-run %s | filecheck %s
// Enzyme-MLIR ForwardMode/affine.mlir: affine.for with a loop-carried sum,
// scf.if with two results, and a one-element buffer written by affine.store
// under a condition and read back by affine.load.
// Hand derivations, at x = 1.5, dx = 2:
// @loop: r = 10 + 10*x, dr = 10*dx = 20.
// @if_then_else (as if1): c true: 4*x*dx = 12; c false: 20*dx = 40.
// @if_then: mem = 2; if c: mem = x*x; res = 2*mem. c true: dres = 4*x*dx = 12;
// c false: mem never depends on x, dres = 0 (the shadow of the local buffer
// must start at zero, not hold garbage).

// The affine ops are lowered to scf/memref first; the local buffer gets a
// shadow buffer, zero-initialised before anything reads it.
// IR-LABEL: func.func @loop_fwd_d_n(
// IR-NOT:     affine.
// IR:         scf.for
// IR-LABEL: func.func @if_then_fwd_dc_n(
// IR:         %[[MEM:.*]] = memref.alloc() : memref<1xf64>
// IR-NEXT:    %[[DMEM:.*]] = memref.alloc() : memref<1xf64>
// IR-NEXT:    %[[Z:.*]] = arith.constant 0.000000e+00 : f64
// IR-NEXT:    %[[I:.*]] = arith.constant 0 : index
// IR-NEXT:    memref.store %[[Z]], %[[DMEM]][%[[I]]] {{.*}}: memref<1xf64>
// IR:         scf.if
// IR:           memref.store %{{.*}}, %[[DMEM]][%[[I]]] {{.*}}: memref<1xf64>
// IR:         memref.load %[[DMEM]][%[[I]]] {{.*}}: memref<1xf64>
// IR:         memref.dealloc %[[DMEM]] : memref<1xf64>

func.func @loop(%x: f64) -> f64 {
  %cst = arith.constant 10.0 : f64
  %r = affine.for %i = 0 to 10 step 1 iter_args(%acc = %cst) -> (f64) {
    %n = arith.addf %acc, %x : f64
    affine.yield %n : f64
  }
  func.return %r : f64
}

func.func @if_then_else(%x: f64, %c: i1) -> f64 {
  %c2 = arith.constant 2.0 : f64
  %c10 = arith.constant 10.0 : f64
  %r:2 = scf.if %c -> (f64, f64) {
    %mul = arith.mulf %x, %x : f64
    scf.yield %mul, %c2 : f64, f64
  } else {
    %add = arith.addf %x, %x : f64
    scf.yield %add, %c10 : f64, f64
  }
  %res = arith.mulf %r#0, %r#1 : f64
  func.return %res : f64
}

func.func @if_then(%x: f64, %c: i1) -> f64 {
  %c2 = arith.constant 2.0 : f64
  %mem = memref.alloc() : memref<1xf64>
  affine.store %c2, %mem[0] : memref<1xf64>
  scf.if %c {
    %mul = arith.mulf %x, %x : f64
    affine.store %mul, %mem[0] : memref<1xf64>
  }
  %r = affine.load %mem[0] : memref<1xf64>
  %res = arith.mulf %c2, %r : f64
  memref.dealloc %mem : memref<1xf64>
  func.return %res : f64
}

func.func @main() {
  %x = arith.constant 1.5 : f64
  %dx = arith.constant 2.0 : f64
  %t = arith.constant true
  %f = arith.constant false
  %l = ad.fwddiff @loop(%x, %dx) {activity = [dup], ret_activity = [dupnoneed]} : (f64, f64) -> f64
  // CHECK: loop = 20
  printf.print_format "loop = {}\n", %l : f64
  %a = ad.fwddiff @if_then_else(%x, %dx, %t) {activity = [dup, const], ret_activity = [dupnoneed]} : (f64, f64, i1) -> f64
  %b = ad.fwddiff @if_then_else(%x, %dx, %f) {activity = [dup, const], ret_activity = [dupnoneed]} : (f64, f64, i1) -> f64
  // CHECK-NEXT: if_then_else: then = 12 else = 40
  printf.print_format "if_then_else: then = {} else = {}\n", %a : f64, %b : f64
  %c = ad.fwddiff @if_then(%x, %dx, %t) {activity = [dup, const], ret_activity = [dupnoneed]} : (f64, f64, i1) -> f64
  %d = ad.fwddiff @if_then(%x, %dx, %f) {activity = [dup, const], ret_activity = [dupnoneed]} : (f64, f64, i1) -> f64
  // CHECK-NEXT: if_then: taken = 12 not taken = 0
  printf.print_format "if_then: taken = {} not taken = {}\n", %c : f64, %d : f64
  func.return
}
