// RUN: ad-opt %s --emit=llvm-ir | filecheck %s
// RUN: ad-opt %s --emit=llvm-ir --no-boundscheck | filecheck %s --check-prefix=NOCHECK
// Calls: a private function has internal linkage; memref arguments expand
// to (ptr, offset, sizes, strides); several results, or a memref result,
// come back as one struct of their parts. After a call the caller reads
// the count of pending stops (one relaxed load) and, only if some thread
// stopped, asks whether its own thread's slot holds a stop; it returns
// early if so (not without bounds checks). printf: {} becomes %g for floats and %ld for integers,
// and stdout is flushed after each print.

// CHECK-LABEL: define internal {ptr, i64, i64, i64, double} @"u.view"(ptr %"x", i64 %"x.offset", i64 %"x.size0", i64 %"x.stride0")
// CHECK: insertvalue {ptr, i64, i64, i64, double}
func.func private @view(%x: memref<?xf64>) -> (memref<2xf64, strided<[1], offset: 1>>, f64) {
  %v = memref.subview %x[1] [2] [1] : memref<?xf64> to memref<2xf64, strided<[1], offset: 1>>
  %one = arith.constant 1.0 : f64
  func.return %v, %one : memref<2xf64, strided<[1], offset: 1>>, f64
}

// CHECK-LABEL: define void @"u.main"(ptr %"x", i64 %"x.offset", i64 %"x.size0", i64 %"x.stride0")
// CHECK: call {ptr, i64, i64, i64, double} @"u.view"(ptr %"x", i64 0, i64 %"x.size0", i64 1)
// CHECK: load atomic i64, {{.*}}@"adpasses_error_pending" monotonic
// CHECK-NEXT: icmp ne i64
// CHECK: call i1 @"adpasses_stopped"()
// CHECK: call i32 (ptr, ...) @"printf"({{.*}}, double {{.*}}, i64 2)
// CHECK-NEXT: call i32 @"fflush"(ptr null)
// CHECK: private constant [16 x i8] c"v = %g n = %ld\0a\00"
// NOCHECK-LABEL: define void @"u.main"
// NOCHECK-NOT: adpasses_error_pending
// NOCHECK: ret void
func.func @main(%x: memref<?xf64>) {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %v, %s = func.call @view(%x) : (memref<?xf64>) -> (memref<2xf64, strided<[1], offset: 1>>, f64)
  %a = memref.load %v[%c0] : memref<2xf64, strided<[1], offset: 1>>
  printf.print_format "v = {} n = {}\n", %a : f64, %c2 : index
  func.return
}
