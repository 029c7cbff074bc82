// RUN: ad-opt %s --print-activity 2>&1 >/dev/null | filecheck %s
// RUN: not ad-opt %s --reverse 2>&1 | filecheck %s --check-prefix=GRAD
// An scf.execute_region with several blocks has no region-flow entry (the
// table's edges read one block per region): the activity analysis treats it
// as an unknown op, conservatively (it used to stop with xDSL's "'block'
// property ... only available for single-block regions"). The reverse pass
// rejects its unstructured control flow with a located error.

// CHECK:      activity of @f (args: active, const; results: active)
// CHECK-NEXT:   arg %x : f64  active
// CHECK-NEXT:   arg %c : i1  const
// CHECK-NEXT:   %r = scf.execute_region  active  {{.*}}multi_block_region.mlir:[[# @LINE + 7]]:3
// CHECK-NEXT:     cf.cond_br  const
// CHECK-NEXT:     %a = arith.mulf  active
// CHECK-NEXT:   func.return  active

// GRAD: multi_block_region.mlir:[[# @LINE + 3]]:5: error: 'cf.cond_br': unstructured control flow cannot be differentiated
func.func @f(%x: f64, %c: i1) -> f64 {
  %r = scf.execute_region -> (f64) {
    cf.cond_br %c, ^bb1, ^bb2
  ^bb1:
    %a = arith.mulf %x, %x : f64
    scf.yield %a : f64
  ^bb2:
    scf.yield %x : f64
  }
  func.return %r : f64
}
func.func @g(%x: f64, %c: i1) -> f64 {
  %s = arith.constant 1.0 : f64
  %d = ad.autodiff @f(%x, %c, %s) {activity = [active, const], ret_activity = [active]} : (f64, i1, f64) -> f64
  func.return %d : f64
}
