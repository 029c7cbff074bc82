// cf branches in a function body that form structured shapes are lifted to
// scf before differentiating (adpasses/transforms/lift_cf.py): a chain of
// cf.br, an if/else diamond joining at a block argument, a triangle (one
// side falls through to the join), two sides that both return, and a
// cond_br whose two edges reach one block (an arith.select). A loop stays
// an error (reverse/errors.mlir, reverse/enzyme/errors.mlir).
// Hand derivations, at x = 0.7, seed 1:
// - diamond(x, c) = 2 * (c ? sin x : x^2) (through a chain): c: 2 cos x =
//   1.52968; !c: 4x = 2.8;
// - triangle(x, c) = c ? 3 exp x : x: c: 3 e^x = 6.04126; !c: 1;
// - returns(x, c) = c ? x * 3 : x * x: 3, 1.4;
// - pick(x, y) = x < y ? x : y, d/dx, d/dy: (0.7, 2): (1, 0); (3, 2): (0, 1).
// RUN: ad-opt %s --reverse | filecheck %s --check-prefix=IR
// RUN: ad-run %s | filecheck %s

// IR-LABEL: func.func @diamond_grad_ac_a(
// IR-NOT:     {{[^s]cf\.}}
// IR:         scf.if %c -> (f64) {
// IR:           math.cos
// IR:         func.return
// IR-LABEL: func.func @triangle_grad_ac_a(
// IR-NOT:     {{[^s]cf\.}}
// IR:         scf.if %c
// IR-LABEL: func.func @returns_grad_ac_a(
// IR-NOT:     {{[^s]cf\.}}
// IR:         scf.if %c
// IR-LABEL: func.func @pick_grad_aa_a(
// IR-NOT:     {{[^s]cf\.}}
// IR:         arith.select %c
// CHECK: diamond 1.52968 2.8
// CHECK-NEXT: triangle 6.04126 1
// CHECK-NEXT: returns 3 1.4
// CHECK-NEXT: pick 1 0 0 1

func.func @diamond(%x: f64, %c: i1) -> f64 {
  %two = arith.constant 2.0 : f64
  cf.cond_br %c, ^t(%x : f64), ^e
^t(%a: f64):
  %s = math.sin %a : f64
  cf.br ^m(%s : f64)
^e:
  %q = arith.mulf %x, %x : f64
  cf.br ^m(%q : f64)
^m(%r: f64):
  %y = arith.mulf %r, %two : f64
  cf.br ^last(%y : f64)
^last(%z: f64):
  func.return %z : f64
}

func.func @triangle(%x: f64, %c: i1) -> f64 {
  %three = arith.constant 3.0 : f64
  cf.cond_br %c, ^t, ^m(%x : f64)
^t:
  %e = math.exp %x : f64
  %s = arith.mulf %e, %three : f64
  cf.br ^m(%s : f64)
^m(%r: f64):
  func.return %r : f64
}

func.func @returns(%x: f64, %c: i1) -> f64 {
  %three = arith.constant 3.0 : f64
  cf.cond_br %c, ^t, ^e
^t:
  %a = arith.mulf %x, %three : f64
  func.return %a : f64
^e:
  %b = arith.mulf %x, %x : f64
  func.return %b : f64
}

func.func @pick(%x: f64, %y: f64) -> f64 {
  %c = arith.cmpf ult, %x, %y : f64
  cf.cond_br %c, ^m(%x : f64), ^m(%y : f64)
^m(%r: f64):
  func.return %r : f64
}

func.func @main() {
  %x = arith.constant 0.7 : f64
  %one = arith.constant 1.0 : f64
  %t = arith.constant true
  %f = arith.constant false
  %a = ad.autodiff @diamond(%x, %t, %one) {activity = [active, const], ret_activity = [active]} : (f64, i1, f64) -> f64
  %b = ad.autodiff @diamond(%x, %f, %one) {activity = [active, const], ret_activity = [active]} : (f64, i1, f64) -> f64
  printf.print_format "diamond {} {}\n", %a : f64, %b : f64
  %c = ad.autodiff @triangle(%x, %t, %one) {activity = [active, const], ret_activity = [active]} : (f64, i1, f64) -> f64
  %d = ad.autodiff @triangle(%x, %f, %one) {activity = [active, const], ret_activity = [active]} : (f64, i1, f64) -> f64
  printf.print_format "triangle {} {}\n", %c : f64, %d : f64
  %e = ad.autodiff @returns(%x, %t, %one) {activity = [active, const], ret_activity = [active]} : (f64, i1, f64) -> f64
  %g = ad.autodiff @returns(%x, %f, %one) {activity = [active, const], ret_activity = [active]} : (f64, i1, f64) -> f64
  printf.print_format "returns {} {}\n", %e : f64, %g : f64
  %two = arith.constant 2.0 : f64
  %three = arith.constant 3.0 : f64
  %p0, %p1 = ad.autodiff @pick(%x, %two, %one) {activity = [active, active], ret_activity = [active]} : (f64, f64, f64) -> (f64, f64)
  %q0, %q1 = ad.autodiff @pick(%three, %two, %one) {activity = [active, active], ret_activity = [active]} : (f64, f64, f64) -> (f64, f64)
  printf.print_format "pick {} {} {} {}\n", %p0 : f64, %p1 : f64, %q0 : f64, %q1 : f64
  func.return
}
