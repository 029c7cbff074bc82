// cf loops (back edges) lifted to scf.while before differentiating, as
// `mlir-opt --convert-scf-to-cf` writes them:
// - @horner: a for loop (header ^hdr with the counter and the accumulator,
//   a body block, the exit reading the accumulator): f = a^2 sin x0 +
//   a sin x1 + sin x2 at x = (1.5, -2, 0.25), a = 0.5, by hand
//   df/dx = (a^2 cos x0, a cos x1, cos x2) = (0.0176843, -0.208073, 0.968912),
//   df/da = 2a sin x0 + sin x1 = 0.0881976, f = 0.042129;
// - @power: a loop that continues on false (the condition negated) with a
//   body block: y = x, three times y = y * x: y = x^4, dy/dx = 4 x^3 = 13.5
//   at x = 1.5;
// - @dowhile: Enzyme's bbarg-order.mlir, a block branching to itself: x + 1
//   for x >= -1, derivative 1.
// A loop with a second exit (a break) keeps the error at its branch
// (Inputs/cf_loop_break.mlir).
// RUN: ad-opt %s --reverse | ad-run | filecheck %s
// CHECK: horner 0.042129 0.0176843 -0.208073 0.968912 0.0881976
// CHECK-NEXT: power 5.0625 13.5
// CHECK-NEXT: dowhile 1
// RUN: ad-opt %s --reverse | filecheck %s --check-prefix=IR
// IR-LABEL: func.func @horner_grad_da_a(
// IR:         %{{.*}}, %{{.*}}, %{{.*}} = scf.while
// IR:           arith.cmpi slt
// IR:           scf.condition
// IR:         } attributes {ad.counted}
// IR-NOT:     {{ cf\.(br|cond_br)}}
// IR-LABEL: func.func @power(
// IR-LABEL: func.func @power_grad_a_a(
// IR:         arith.xori
// IR:         scf.condition
// IR-NOT:     cf.br
// IR-LABEL: func.func @dowhile(
// RUN: not ad-opt %S/Inputs/cf_loop_break.mlir --reverse 2>&1 | filecheck %s --check-prefix=BREAK
// BREAK: cf_loop_break.mlir:{{[0-9]+}}:{{[0-9]+}}: error: 'cf.br': unstructured control flow cannot be differentiated: {{.*}} a loop with a second exit or back edge
// BREAK-NOT: Traceback

func.func @horner(%x: memref<?xf64>, %a: f64) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?xf64>
  %z = arith.constant 0.0 : f64
  cf.br ^hdr(%c0, %z : index, f64)
^hdr(%i: index, %acc: f64):
  %go = arith.cmpi slt, %i, %n : index
  cf.cond_br %go, ^body, ^exit
^body:
  %v = memref.load %x[%i] : memref<?xf64>
  %s = math.sin %v : f64
  %p = arith.mulf %acc, %a : f64
  %q = arith.addf %p, %s : f64
  %next = arith.addi %i, %c1 : index
  cf.br ^hdr(%next, %q : index, f64)
^exit:
  func.return %acc : f64
}
func.func @power(%x: f64) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  cf.br ^h(%x, %c0 : f64, index)
^h(%y: f64, %k: index):
  %stop = arith.cmpi sge, %k, %c3 : index
  cf.cond_br %stop, ^done(%y : f64), ^step
^step:
  %y2 = arith.mulf %y, %x : f64
  %k2 = arith.addi %k, %c1 : index
  cf.br ^h(%y2, %k2 : f64, index)
^done(%r: f64):
  func.return %r : f64
}
func.func @dowhile(%x: f64) -> f64 {
  %cst1 = arith.constant 1.000000e+00 : f64
  %2 = arith.addf %x, %cst1 : f64
  cf.br ^bb1(%2 : f64)
^bb1(%1 : f64):
  %cst = arith.constant 0.000000e+00 : f64
  %flag = arith.cmpf ult, %1, %cst : f64
  cf.cond_br %flag, ^bb1(%1 : f64), ^bb2(%1 : f64)
^bb2(%ret : f64):
  func.return %ret : f64
}
func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %x = memref.alloc(%c3) : memref<?xf64>
  %dx = memref.alloc(%c3) : memref<?xf64>
  %v0 = arith.constant 1.5 : f64
  %v1 = arith.constant -2.0 : f64
  %v2 = arith.constant 0.25 : f64
  %zero = arith.constant 0.0 : f64
  %one = arith.constant 1.0 : f64
  %a = arith.constant 0.5 : f64
  memref.store %v0, %x[%c0] : memref<?xf64>
  memref.store %v1, %x[%c1] : memref<?xf64>
  memref.store %v2, %x[%c2] : memref<?xf64>
  scf.for %i = %c0 to %c3 step %c1 {
    memref.store %zero, %dx[%i] : memref<?xf64>
  }
  %f = func.call @horner(%x, %a) : (memref<?xf64>, f64) -> f64
  %da = ad.autodiff @horner(%x, %dx, %a, %one) {activity = [dup, active], ret_activity = [active]}
    : (memref<?xf64>, memref<?xf64>, f64, f64) -> f64
  %g0 = memref.load %dx[%c0] : memref<?xf64>
  %g1 = memref.load %dx[%c1] : memref<?xf64>
  %g2 = memref.load %dx[%c2] : memref<?xf64>
  printf.print_format "horner {} {} {} {} {}\n", %f : f64, %g0 : f64, %g1 : f64, %g2 : f64, %da : f64
  %p = func.call @power(%v0) : (f64) -> f64
  %dp = ad.autodiff @power(%v0, %one) {activity = [active], ret_activity = [active]} : (f64, f64) -> f64
  printf.print_format "power {} {}\n", %p : f64, %dp : f64
  %two = arith.constant 2.0 : f64
  %dd = ad.autodiff @dowhile(%two, %one) {activity = [active], ret_activity = [active]} : (f64, f64) -> f64
  printf.print_format "dowhile {}\n", %dd : f64
  memref.dealloc %x : memref<?xf64>
  memref.dealloc %dx : memref<?xf64>
  func.return
}
