// RUN: ad-opt %s --emit=llvm-ir | filecheck %s
// RUN: ad-opt %s --emit=llvm-ir --no-boundscheck | filecheck %s --check-prefix=NOCHECK
//
// Every stop of generated code is one mechanism (docs/lowering.md, "Stops";
// adpasses/lowering/core.py, FunctionTranslator.stop_if): an unlikely branch
// to `__adpasses_oob(site, index, code, size)`, then the early exit. Only the
// code (adpasses/core/stop_codes.py) and the two values differ:
//   axis >= 0 index, -1 division by zero, -2 - d shadow/size mismatch,
//   -1099511627781 float to int, -1099511627782 loop step,
//   -1099511627784 raised (ad.raise_if, cf.assert, ad.broadcast).
// A caller tests the slot after a call that may stop; a parallel loop
// re-records its first stopped chunk through the same call.

// The one cold function every stop calls: it records the stop in the
// thread's error slot.
// CHECK-LABEL: define double @"u.index"
// CHECK:         %[[BAD:.+]] = icmp uge i64 %"i", %"x.size0"
// CHECK-NEXT:    br i1 %[[BAD]], label %"[[STOP:.+]]", label %"{{.+}}", !prof
// CHECK:       [[STOP]]:
// CHECK-NEXT:    call void @"__adpasses_oob"(i64 [[SITE:[0-9]+]], i64 %"i", i64 0, i64 %"x.size0")
// CHECK-NEXT:    br label %"early_exit"
// NOCHECK-LABEL: define double @"u.index"
// NOCHECK-NOT:   __adpasses_oob
// NOCHECK:       ret double
func.func @index(%x: memref<?xf64>, %i: index) -> f64 {
  %v = memref.load %x[%i] : memref<?xf64>
  func.return %v : f64
}

// CHECK-LABEL: define i64 @"u.div"
// CHECK:         br i1 %{{.+}}, label %"[[STOP:.+]]", label %"{{.+}}", !prof
// CHECK:       [[STOP]]:
// CHECK-NEXT:    call void @"__adpasses_oob"(i64 {{[0-9]+}}, i64 0, i64 -1, i64 0)
// CHECK-NEXT:    br label %"early_exit"
// NOCHECK-LABEL: define i64 @"u.div"
// NOCHECK-NOT:   __adpasses_oob
// NOCHECK:       ret i64
func.func @div(%a: i64, %b: i64) -> i64 {
  %q = arith.divsi %a, %b : i64
  func.return %q : i64
}

// CHECK-LABEL: define i64 @"u.to_int"
// CHECK:         call void @"__adpasses_oob"(i64 {{[0-9]+}}, i64 %{{.+}}, i64 -1099511627781, i64 64)
// CHECK-NEXT:    br label %"early_exit"
// NOCHECK-LABEL: define i64 @"u.to_int"
// NOCHECK-NOT:   __adpasses_oob
// NOCHECK:       ret i64
func.func @to_int(%x: f64) -> i64 {
  %n = arith.fptosi %x : f64 to i64
  func.return %n : i64
}

// Kept without bounds checks: the program's own semantics and sizes.
// CHECK-LABEL: define void @"u.step"
// CHECK:         call void @"__adpasses_oob"(i64 {{[0-9]+}}, i64 %"s", i64 -1099511627782, i64 0)
// NOCHECK-LABEL: define void @"u.step"
// NOCHECK:       call void @"__adpasses_oob"(i64 {{[0-9]+}}, i64 %"s", i64 -1099511627782, i64 0)
func.func @step(%n: index, %s: index) {
  %c0 = arith.constant 0 : index
  scf.for %i = %c0 to %n step %s {
    scf.yield
  }
  func.return
}

// CHECK-LABEL: define i64 @"u.raise"
// CHECK:         %[[BAD:.+]] = icmp sgt i64 %"n", 3
// CHECK-NEXT:    br i1 %[[BAD]], label %"[[STOP:.+]]", label %"{{.+}}", !prof
// CHECK:       [[STOP]]:
// CHECK-NEXT:    call void @"__adpasses_oob"(i64 {{[0-9]+}}, i64 %"n", i64 -1099511627784, i64 3)
// CHECK-NEXT:    br label %"early_exit"
// NOCHECK-LABEL: define i64 @"u.raise"
// NOCHECK:       call void @"__adpasses_oob"(i64 {{[0-9]+}}, i64 %"n", i64 -1099511627784, i64 3)
func.func @raise(%n: index) -> index {
  %c3 = arith.constant 3 : index
  %bad = arith.cmpi sgt, %n, %c3 : index
  ad.raise_if %bad, %n, %c3 {exception = "ValueError", message = "n = {0} > {1}"}
  func.return %n : index
}

// cf.assert: the stop of an ad.raise_if (AssertionError), with no values.
// CHECK-LABEL: define double @"u.assert"
// CHECK:         %[[BAD:.+]] = xor i1 %{{.+}}, -1
// CHECK-NEXT:    br i1 %[[BAD]], label %"[[STOP:.+]]", label %"{{.+}}", !prof
// CHECK:       [[STOP]]:
// CHECK-NEXT:    call void @"__adpasses_oob"(i64 {{[0-9]+}}, i64 0, i64 -1099511627784, i64 0)
// NOCHECK-LABEL: define double @"u.assert"
// NOCHECK:       call void @"__adpasses_oob"(i64 {{[0-9]+}}, i64 0, i64 -1099511627784, i64 0)
func.func @assert(%x: f64) -> f64 {
  %z = arith.constant 0.0 : f64
  %ok = arith.cmpf ogt, %x, %z : f64
  cf.assert %ok, "x > 0"
  func.return %x : f64
}

// ad.broadcast: the stop of an ad.raise_if (ValueError) with both sizes.
// CHECK-LABEL: define i64 @"u.bcast"
// CHECK:         %[[SIZE:.+]] = select i1 %{{.+}}, i64 %"b", i64 %"a"
// CHECK:         call void @"__adpasses_oob"(i64 {{[0-9]+}}, i64 %"a", i64 -1099511627784, i64 %"b")
// CHECK:         ret i64 %[[SIZE]]
// NOCHECK-LABEL: define i64 @"u.bcast"
// NOCHECK:       call void @"__adpasses_oob"(i64 {{[0-9]+}}, i64 %"a", i64 -1099511627784, i64 %"b")
func.func @bcast(%a: index, %b: index) -> index {
  %s = ad.broadcast %a, %b
  func.return %s : index
}

// ad.shadow_check: one compare per dynamic dimension d, code -2 - d, one
// site; none without bounds checks.
// CHECK-LABEL: define void @"u.shadow"
// CHECK:         icmp ne i64 %"dx.size0", %"x.size0"
// CHECK:         call void @"__adpasses_oob"(i64 [[SITE:[0-9]+]], i64 %"dx.size0", i64 -2, i64 %"x.size0")
// CHECK:         icmp ne i64 %"dx.size1", %"x.size1"
// CHECK:         call void @"__adpasses_oob"(i64 [[SITE]], i64 %"dx.size1", i64 -3, i64 %"x.size1")
// NOCHECK-LABEL: define void @"u.shadow"
// NOCHECK-NOT:   __adpasses_oob
// NOCHECK:       ret void
func.func @shadow(%x: memref<?x?xf64>, %dx: memref<?x?xf64>) {
  ad.shadow_check %x, %dx : memref<?x?xf64>, memref<?x?xf64>
  func.return
}

// ad.size_match: the same stop as a shadow's, kept without bounds checks
// (BLAS and the loop nest after it rely on it).
// CHECK-LABEL: define void @"u.sizes"
// CHECK:         call void @"__adpasses_oob"(i64 {{[0-9]+}}, i64 %"a.size1", i64 -2, i64 %"b.size0")
// NOCHECK-LABEL: define void @"u.sizes"
// NOCHECK:       call void @"__adpasses_oob"(i64 {{[0-9]+}}, i64 %"a.size1", i64 -2, i64 %"b.size0")
func.func @sizes(%a: memref<?x?xf64>, %b: memref<?x?xf64>) {
  ad.size_match %a[1], %b[0] "a @ b" : memref<?x?xf64>, memref<?x?xf64>
  func.return
}

// A caller leaves too when its callee stopped (the pending counter, then
// this thread's flag). Without bounds checks, after a call of a function
// whose ad.broadcast may stop as well.
// CHECK-LABEL: define i64 @"u.caller"
// CHECK:         call i64 @"u.bcast"
// CHECK:         load {{.*}} @"adpasses_error_pending"
// CHECK:         call i1 @"adpasses_stopped"()
// CHECK:         br label %"early_exit"
// NOCHECK-LABEL: define i64 @"u.caller"
// NOCHECK:       call i64 @"u.bcast"
// NOCHECK:       load {{.*}} @"adpasses_error_pending"
// NOCHECK:       call i1 @"adpasses_stopped"()
func.func @caller(%a: index, %b: index) -> index {
  %s = func.call @bcast(%a, %b) : (index, index) -> index
  func.return %s : index
}

// A parallel loop: each chunk's worker takes its thread's stop into its
// record; the first chunk that stopped is recorded through the same call.
// CHECK-LABEL: define double @"u.par_sum"
// CHECK:         call void @"adpasses_parallel_run"
// CHECK:         call void @"__adpasses_oob"(i64 %{{.+}}, i64 %{{.+}}, i64 %{{.+}}, i64 %{{.+}})
// CHECK-NEXT:    br label %"early_exit"
func.func @par_sum(%x: memref<?xf64> {ad.noalias}, %n: index) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f64
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f64) {
    %a = memref.load %x[%i] : memref<?xf64>
    %acc2 = arith.addf %acc, %a : f64
    scf.yield %acc2 : f64
  } {ad.parallel = "prange"}
  func.return %r : f64
}

// CHECK-LABEL: define internal void @"__adpasses_oob"(i64 %".1", i64 %".2", i64 %".3", i64 %".4") cold noinline
// CHECK-NEXT:  {
// CHECK-NEXT:  {{.+}}:
// CHECK-NEXT:    call void @"adpasses_record_stop"(i64 %".1", i64 %".2", i64 %".3", i64 %".4")
// CHECK-NEXT:    ret void
