// RUN: ad-opt %s --emit=llvm-ir | filecheck %s
// Allocations go through the counting runtime allocator; static allocas sit
// in the entry block; subviews compute offset + o*stride and stride*step;
// dim reads the size; noalias arguments get LLVM noalias. A local array
// that does not escape and is freed in its own block is a workspace kept
// across calls (ad-promote-scratch, which the lowering runs): %h of @ops;
// one a select may choose escapes, and is malloc'd and freed (@chosen).

// CHECK-LABEL: define double @"u.ops"(ptr noalias %"x", i64 %"x.offset", i64 %"x.size0", i64 %"x.stride0", i64 %"n")
// CHECK: entry:
// CHECK-NEXT: alloca [4 x double]
// CHECK: body:
// CHECK: call void @"adpasses_workspace_take"(
// CHECK: mul i64 {{.*}}, 2
// CHECK: call void @"adpasses_workspace_give_back"(
// CHECK-LABEL: define double @"u.chosen"(
// CHECK: call ptr @"__adpasses_alloc"(i64
// CHECK: select i1
// CHECK: call void @"free"(ptr
func.func @ops(%x: memref<?xf64> {ad.noalias}, %n: index) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %s = memref.alloca() : memref<4xf64>
  %h = memref.alloc(%n) : memref<?xf64>
  %v = memref.subview %x[1] [%n] [2] : memref<?xf64> to memref<?xf64, strided<[2], offset: 1>>
  %a = memref.load %v[%c1] : memref<?xf64, strided<[2], offset: 1>>
  memref.store %a, %s[%c0] : memref<4xf64>
  memref.store %a, %h[%c0] : memref<?xf64>
  %b = memref.load %h[%c0] : memref<?xf64>
  memref.dealloc %h : memref<?xf64>
  func.return %b : f64
}

func.func @chosen(%x: memref<?xf64>, %n: index, %p: i1) -> f64 {
  %c0 = arith.constant 0 : index
  %h = memref.alloc(%n) : memref<?xf64>
  %m = arith.select %p, %h, %x : memref<?xf64>
  %b = memref.load %m[%c0] : memref<?xf64>
  memref.dealloc %h : memref<?xf64>
  func.return %b : f64
}

// CHECK-LABEL: define {{.*}}@"__adpasses_alloc"(i64
// CHECK: @"adpasses_alloc_stats"
// CHECK: call ptr @"malloc"
