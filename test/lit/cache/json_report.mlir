// RUN: ad-opt %s --reverse --no-loop-local --print-cache-report --cache-report-format=json 2>&1 >/dev/null | filecheck %s
// RUN: ad-opt %s --reverse --print-cache-report --cache-report-format=json 2>&1 >/dev/null | filecheck %s --check-prefix=LOCAL
// --cache-report-format alone asks for the report (it was silently ignored):
// RUN: ad-opt %s --reverse --cache-report-format=json 2>&1 >/dev/null | filecheck %s --check-prefix=LOCAL
// and without --reverse there is none to print: a warning names the flag.
// RUN: ad-opt %s --cache-report-format=json 2>&1 >/dev/null | filecheck %s --check-prefix=NOREV
// NOREV: ad-opt: warning: --cache-report-format needs --reverse (or --forward): no report is printed
// The cache report as JSON for tools: one object per generated function.
// (Without loop-local reverse: the squared element is taped.)

// With it (the default), each top-level loop's decision and its reason;
// nothing is taped.
// LOCAL:      "taped_bytes_formula": "0",
// LOCAL:      "loops": [
// LOCAL-NEXT:   {
// LOCAL-NEXT:     "location": "{{.*}}json_report.mlir:[[#LOOP:]]:3",
// LOCAL-NEXT:     "loop_local": true,
// LOCAL-NEXT:     "reason": "iterations independent (alias analysis): each iteration reversed right after its forward"

// CHECK:      "gradient": "sq_grad_d_a",
// CHECK-NEXT: "primal": "sq",
// CHECK-NEXT: "policy": "minimal",
// CHECK:        "value": "%a",
// CHECK-NEXT:   "op": "memref.load",
// CHECK-NEXT:   "decision": "tape",
// CHECK-NEXT:   "location": "{{.*}}json_report.mlir:[[#LINE:]]:5",
// CHECK-NEXT:   "reason": "overwritten later: {{.*}}",
// CHECK-NEXT:   "dtype": "f64",
// CHECK-NEXT:   "count": "dim(x, 0)",
// CHECK-NEXT:   "bytes": "8*(dim(x, 0))"
// Not bound to arguments: no total in bytes, the formula beside it.
// CHECK:      "taped_bytes": null,
// CHECK-NEXT: "taped_bytes_formula": "8*(dim(x, 0))"
func.func @sq(%x: memref<?xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f64
  %n = memref.dim %x, %c0 : memref<?xf64>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (f64) {
    %a = memref.load %x[%i] : memref<?xf64>
    %p = arith.mulf %a, %a : f64
    memref.store %p, %x[%i] : memref<?xf64>
    %s = arith.addf %acc, %p : f64
    scf.yield %s : f64
  }
  func.return %r : f64
}
func.func @main(%x: memref<?xf64>, %dx: memref<?xf64>) {
  %s = arith.constant 1.0 : f64
  ad.autodiff @sq(%x, %dx, %s) {activity = [dup], ret_activity = [active]} : (memref<?xf64>, memref<?xf64>, f64) -> ()
  func.return
}
