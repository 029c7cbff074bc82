// RUN: ad-opt %s --reverse | filecheck %s --check-prefix=GRAD
// RUN: not ad-run %s 2>&1 | filecheck %s
// ad.raise_if (a Python raise/assert from the frontend): the gradient keeps
// it in the forward sweep, before the reverse sweep reads anything, and the
// lowering stops the call with that exception class, the message and the
// location (adpasses/lowering/memref.py); braces in a message are doubled.

// GRAD-LABEL: func.func @f_grad_a_a(%x: f64, %seed: f64) -> f64
// GRAD:         %[[BAD:.*]] = arith.cmpf ole, %x, %{{.*}} : f64
// GRAD-NEXT:    ad.raise_if %[[BAD]] {exception = "ValueError", message = "x must be positive {{[{][{]}}x{{[}][}]}}"}
// GRAD:         math.sqrt
// GRAD:         func.return
func.func @f(%x: f64) -> f64 {
  %z = arith.constant 0.0 : f64
  %bad = arith.cmpf ole, %x, %z : f64
  ad.raise_if %bad {exception = "ValueError", message = "x must be positive {{x}}"}
  %r = math.sqrt %x : f64
  func.return %r : f64
}

func.func @main() {
  %one = arith.constant 1.0 : f64
  %four = arith.constant 4.0 : f64
  // d sqrt(x) at 4 = 0.25
  %d = ad.autodiff @f(%four, %one) {activity = [active], ret_activity = [active]} : (f64, f64) -> f64
  // CHECK: df = 0.25
  printf.print_format "df = {}\n", %d : f64
  %m = arith.constant -1.0 : f64
  // the assert's location (line 16), its class and message
  // CHECK: raise_assert.mlir:16:3: error: ValueError: x must be positive {x}
  // CHECK-NOT: not reached
  %e = ad.autodiff @f(%m, %one) {activity = [active], ret_activity = [active]} : (f64, f64) -> f64
  printf.print_format "not reached {}\n", %e : f64
  func.return
}
