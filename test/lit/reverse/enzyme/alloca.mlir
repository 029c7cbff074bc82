// Enzyme-MLIR ReverseMode/alloca.mlir: a scalar through a rank-0
// memref.alloca. Its shadow is a stack buffer set to zero before the
// reverse sweep accumulates into it (Enzyme's check), or, after
// simplification, no buffer at all. With ad-scalar-replace (the default)
// the buffer is the stored value before differentiation: no shadow (SROA);
// RAW keeps the buffer to show Enzyme's zeroed shadow.
// Hand derivation: f(x) = x: dx = dout; at x = 2, dout = 0.75: 0.75.
// RUN: ad-opt %s --reverse | filecheck %s --check-prefix=IR
// RUN: ad-opt %s -p 'ad-reverse{simplify=false scalar-replace=false}' | filecheck %s --check-prefix=RAW
// RUN: ad-opt %s -p ad-reverse{simplify=false} | filecheck %s --check-prefix=SROA
// RUN: ad-run %s | filecheck %s

// RAW-LABEL: func.func @foo_flat_grad_a_a(%x: f64, %seed: f64) -> f64
// RAW-DAG:     %[[Z:.*]] = arith.constant 0.000000e+00 : f64
// RAW-DAG:     %[[DBUF:d[a-z]*]] = memref.alloca() : memref<f64>
// RAW:         memref.store %[[Z]], %[[DBUF]][]
// RAW:         func.return
// SROA-LABEL: func.func @foo_flat_grad_a_a(%x: f64, %seed: f64) -> f64
// SROA-NEXT:     func.return %seed : f64
// IR-LABEL: func.func @foo_flat_grad_a_a(%x: f64, %seed: f64) -> f64
// IR:         func.return
// CHECK: dx 0.75

func.func @foo_flat(%x: f64) -> f64 {
  %buf = memref.alloca() : memref<f64>
  memref.store %x, %buf[] : memref<f64>
  %y = memref.load %buf[] : memref<f64>
  func.return %y : f64
}

func.func @main() {
  %x = arith.constant 2.0 : f64
  %d = arith.constant 0.75 : f64
  %dx = ad.autodiff @foo_flat(%x, %d) {activity = [active], ret_activity = [active]} : (f64, f64) -> f64
  printf.print_format "dx {}\n", %dx : f64
  func.return
}
