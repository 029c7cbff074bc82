// Enzyme-MLIR ReverseMode/alloca_scope2.mlir: a value stored into a
// memref.alloca inside a memref.alloca_scope and loaded back, the scope's
// result returned. Enzyme keeps the buffer and its shadow (a second alloca
// in the scope, pushed and popped through caches). adpasses replaces the
// buffer by the stored value before differentiating (ad-scalar-replace), so
// the gradient's scopes only pass the value and its adjoint through; with
// scalar-replace=false the buffer's shadow is a zeroed alloca, inside the
// reverse scope like Enzyme's.
// Hand derivation: foo(x) = x: dx = dout: at x = 2, dout = 0.75: 0.75.
// RUN: ad-opt %s --reverse | filecheck %s --check-prefix=IR
// RUN: ad-opt %s -p 'ad-reverse{scalar-replace=false}' | filecheck %s --check-prefix=RAW
// RUN: ad-run %s | filecheck %s
// RUN: ad-opt %s -p 'ad-reverse{scalar-replace=false}' | ad-run | filecheck %s

// IR-LABEL: func.func @foo_grad_a_a(%x: f64, %seed: f64) -> f64
// IR-NOT:     memref.alloca()
// IR:         "memref.alloca_scope.return"(%seed) : (f64) -> ()
// IR:         func.return
// RAW-LABEL: func.func @foo_grad_a_a(%x: f64, %seed: f64) -> f64
// RAW:         "memref.alloca_scope"() ({
// RAW:           %[[BUF:.*]] = memref.alloca() : memref<f64>
// RAW:           memref.store %x, %[[BUF]][]
// RAW:         "memref.alloca_scope"() ({
// RAW:           %[[SH:.*]] = memref.alloca() : memref<f64>
// RAW:           memref.store %{{.*}}, %[[SH]][]
// RAW:           memref.load %[[SH]][]
// RAW:         func.return
// CHECK: dx 0.75

func.func @foo(%x: f64) -> f64 {
  %out = memref.alloca_scope -> (f64) {
    %buf = memref.alloca() : memref<f64>
    memref.store %x, %buf[] : memref<f64>
    %y = memref.load %buf[] : memref<f64>
    memref.alloca_scope.return %y : f64
  }
  func.return %out : f64
}

func.func @main() {
  %x = arith.constant 2.0 : f64
  %dout = arith.constant 0.75 : f64
  %dx = ad.autodiff @foo(%x, %dout) {activity = [active], ret_activity = [active]} : (f64, f64) -> f64
  printf.print_format "dx {}\n", %dx : f64
  func.return
}
