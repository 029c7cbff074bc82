// Enzyme-MLIR ReverseMode/multiret.mlir: three results (f64, i32, f32),
// two active, the integer one const; without and with the primal results.
// Hand derivation: square(x, y, z) = (x^2, y^2, z^2); seeds (sx, -, sz):
// dx = 2 x sx, dz = 2 z sz; at x = 1.5, y = 3, z = -2, sx = 0.5, sz = 3:
// dx = 1.5, dz = -12; primal results 2.25, 9, 4.
// Enzyme's second request asks for the primal of results 0 and 1 only
// (per-result `active` vs `activenoneed`): `with_primal = [0, 1]`; the
// bare `with_primal` (third request) returns every primal result.
// RUN: ad-opt %s --reverse | filecheck %s --check-prefix=IR
// RUN: ad-run %s | filecheck %s

// The integer product is computed only for the primal results.
// IR-LABEL: func.func @square_grad_aca_aca_p(
// IR:         arith.muli %y, %y : i32
// IR:         func.return %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : f64, i32, f32, f64, f32
// IR-LABEL: func.func @square_grad_aca_aca_p0_1(%x: f64, %y: i32, %z: f32, %seed: f64, %seed_1: f32) -> (f64, i32, f64, f32)
// IR:         arith.muli %y, %y : i32
// IR:         func.return %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : f64, i32, f64, f32
// IR-LABEL: func.func @square_grad_aca_aca(%x: f64, %y: i32, %z: f32, %seed: f64, %seed_1: f32) -> (f64, f32)
// IR-NOT:     arith.muli
// IR:         func.return
// CHECK: dsquare 1.5 -12
// CHECK-NEXT: dsquare01 2.25 9 1.5 -12
// CHECK-NEXT: dsquare2 2.25 9 4 1.5 -12

func.func @square(%x: f64, %y: i32, %z: f32) -> (f64, i32, f32) {
  %x2 = arith.mulf %x, %x : f64
  %y2 = arith.muli %y, %y : i32
  %z2 = arith.mulf %z, %z : f32
  func.return %x2, %y2, %z2 : f64, i32, f32
}

func.func @main() {
  %x = arith.constant 1.5 : f64
  %y = arith.constant 3 : i32
  %z = arith.constant -2.0 : f32
  %sx = arith.constant 0.5 : f64
  %sz = arith.constant 3.0 : f32
  %dx, %dz = ad.autodiff @square(%x, %y, %z, %sx, %sz) {activity = [active, const, active], ret_activity = [active, const, active]} : (f64, i32, f32, f64, f32) -> (f64, f32)
  printf.print_format "dsquare {} {}\n", %dx : f64, %dz : f32
  %q0, %q1, %fx, %fz = ad.autodiff @square(%x, %y, %z, %sx, %sz) {activity = [active, const, active], ret_activity = [active, const, active], with_primal = [0, 1]} : (f64, i32, f32, f64, f32) -> (f64, i32, f64, f32)
  printf.print_format "dsquare01 {} {} {} {}\n", %q0 : f64, %q1 : i32, %fx : f64, %fz : f32
  %p0, %p1, %p2, %ex, %ez = ad.autodiff @square(%x, %y, %z, %sx, %sz) {activity = [active, const, active], ret_activity = [active, const, active], with_primal} : (f64, i32, f32, f64, f32) -> (f64, i32, f32, f64, f32)
  printf.print_format "dsquare2 {} {} {} {} {}\n", %p0 : f64, %p1 : i32, %p2 : f32, %ex : f64, %ez : f32
  func.return
}
