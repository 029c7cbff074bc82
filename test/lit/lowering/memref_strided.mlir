// RUN: ad-opt %s --emit=llvm-ir | filecheck %s
// RUN: ad-opt %s --emit=llvm-ir --no-boundscheck | filecheck %s --check-prefix=NOCHECK
// A loop over a strided memref: each memref argument expands to (pointer,
// offset, sizes, strides); the address is a GEP on the element type of
// offset + i * stride (never ptrtoint arithmetic, which blocks
// vectorisation). Bounds checks are one unsigned compare per index and an
// out-of-line error exit; --no-boundscheck removes them.

// CHECK-LABEL: define double @"u.strided_sum"(ptr %"x", i64 %"x.offset", i64 %"x.size0", i64 %"x.stride0")
// CHECK: for.header:
// CHECK: icmp slt i64
// CHECK: icmp uge i64 %[[I:.*]], %"x.size0"
// CHECK: call void @"__adpasses_oob"
// CHECK: %[[SCALED:.*]] = mul i64 %[[I]], %"x.stride0"
// CHECK: %[[LIN:.*]] = add i64 %"x.offset", %[[SCALED]]
// CHECK: getelementptr inbounds double, ptr %"x", i64 %[[LIN]]
// NOCHECK-LABEL: define double @"u.strided_sum"
// NOCHECK-NOT: __adpasses_oob
// NOCHECK: getelementptr inbounds double
func.func @strided_sum(%x: memref<?xf64, strided<[?], offset: ?>>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f64
  %n = memref.dim %x, %c0 : memref<?xf64, strided<[?], offset: ?>>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (f64) {
    %v = memref.load %x[%i] : memref<?xf64, strided<[?], offset: ?>>
    %s = arith.addf %acc, %v : f64
    scf.yield %s : f64
  }
  func.return %r : f64
}

// Identity layout: unit stride is a constant, and an unchecked access (as
// the reverse pass emits for tapes) has no compare.
// CHECK-LABEL: define void @"u.store_unchecked"(ptr %"y", i64 %"y.offset", i64 %"y.size0", i64 %"y.stride0", i64 %"i", double %"v")
// CHECK-NOT: __adpasses_oob
// CHECK: getelementptr inbounds double, ptr %"y", i64 %"i"
func.func @store_unchecked(%y: memref<?xf64>, %i: index, %v: f64) {
  memref.store %v, %y[%i] {ad.unchecked} : memref<?xf64>
  func.return
}
