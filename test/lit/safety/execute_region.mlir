// scf.execute_region: the reverse is an scf.execute_region that yields the
// adjoints of the outer values its block changed (it used to be skipped,
// and the lowering rejected the op).
// RUN: ad-opt %s --reverse --no-simplify | filecheck %s
// RUN: ad-run %s | filecheck %s --check-prefix=OUT

// CHECK-LABEL: func.func @f_grad_a_a(%x: f64, %seed: f64) -> f64
// CHECK:         %r = scf.execute_region -> (f64) {
// CHECK-NEXT:      %y = arith.mulf %x, %x : f64
// CHECK:         %[[R:.*]] = scf.execute_region -> (f64) {
// CHECK-NEXT:      %[[A:.*]] = arith.mulf %seed, %x : f64
// CHECK-NEXT:      %[[B:.*]] = arith.mulf %seed, %x : f64
// CHECK-NEXT:      %[[C:.*]] = arith.addf %[[A]], %[[B]] : f64
// CHECK-NEXT:      scf.yield %[[C]] : f64
// CHECK-NEXT:    }
// CHECK:         func.return %[[R]] : f64

// OUT: f = 9 df = 6

func.func @f(%x: f64) -> f64 {
  %r = scf.execute_region -> f64 {
    %y = arith.mulf %x, %x : f64
    scf.yield %y : f64
  }
  func.return %r : f64
}

func.func @main() {
  %a = arith.constant 3.0 : f64
  %s = arith.constant 1.0 : f64
  %v = func.call @f(%a) : (f64) -> f64
  %d = ad.autodiff @f(%a, %s) {activity = [active], ret_activity = [active]} : (f64, f64) -> f64
  printf.print_format "f = {} df = {}\n", %v : f64, %d : f64
  func.return
}
