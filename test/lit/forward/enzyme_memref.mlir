// RUN: ad-opt %s --forward | filecheck %s --check-prefix=IR
// RUN: ad-run %s | filecheck %s
// Enzyme-MLIR ForwardMode/memref.mlir: an active value stored into a local
// buffer and loaded back; the tangent goes through the shadow buffer.
// Hand derivation: r = x*x, dr = 2*x*dx; at x = -2, dx = 0.5: (4, -2).

// IR-LABEL: func.func @square_fwd_d_d(
// IR:         %[[TMP:.*]] = memref.alloc() : memref<1xf64>
// IR-NEXT:    %[[DTMP:.*]] = memref.alloc() : memref<1xf64>
// IR:         memref.store %[[DY:.*]], %[[DTMP]][%{{.*}}] {{.*}}: memref<1xf64>
// IR:         %[[R:.*]] = memref.load %[[TMP]]
// IR-NEXT:    ad.keep %[[R]] : f64
// IR-NEXT:    %[[DR:.*]] = memref.load %[[DTMP]]
// IR:         memref.dealloc %[[DTMP]]
// IR-NEXT:    func.return %[[R]], %[[DR]] : f64, f64

func.func @square(%x: f64) -> f64 {
  %c0 = arith.constant 0 : index
  %tmp = memref.alloc() : memref<1xf64>
  %y = arith.mulf %x, %x : f64
  memref.store %y, %tmp[%c0] : memref<1xf64>
  %r = memref.load %tmp[%c0] : memref<1xf64>
  memref.dealloc %tmp : memref<1xf64>
  func.return %r : f64
}

func.func @main() {
  %x = arith.constant -2.0 : f64
  %dx = arith.constant 0.5 : f64
  %p, %t = ad.fwddiff @square(%x, %dx) {activity = [dup], ret_activity = [dup]} : (f64, f64) -> (f64, f64)
  // CHECK: r = 4 dr = -2
  printf.print_format "r = {} dr = {}\n", %p : f64, %t : f64
  func.return
}
