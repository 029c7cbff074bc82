// RUN: ad-opt %s -p ad-lower-matmul | filecheck %s
// RUN: ad-opt %s -p "ad-lower-matmul{blas=true}" | filecheck %s --check-prefix=BLAS
// RUN: ad-opt %s -p ad-lower-matmul --emit=llvm-ir | filecheck %s --check-prefix=LLVM
// RUN: ad-opt %s -p "ad-lower-matmul{blas=true}" --emit=llvm-ir | filecheck %s --check-prefix=LLVM-BLAS
// RUN: ad-opt %s -p "ad-lower-matmul{unchecked=true}" | filecheck %s --check-prefix=UNCHECKED
// RUN: ad-opt %s --emit=llvm-ir | filecheck %s --check-prefix=LLVM-NEST
// ad-lower-matmul: C += A @ B on memrefs becomes three size checks (always
// compiled: the loops and BLAS rely on them) and a loop nest whose innermost
// loop runs along rows of B and C (LLVM vectorises it); with blas=true an
// ad.gemm first, the loops only when it did not run (small product, a
// layout BLAS cannot take, C overlapping A or B).

// CHECK-LABEL: func.func @mm
// CHECK-NEXT:    ad.size_match %a[1 : index], %b[0 : index] "linalg.matmul (C += A @ B)"
// CHECK-NEXT:    ad.size_match %a[0 : index], %c[0 : index] "linalg.matmul (C += A @ B)"
// CHECK-NEXT:    ad.size_match %b[1 : index], %c[1 : index] "linalg.matmul (C += A @ B)"
// CHECK:         %[[M:.*]] = memref.dim %a, %{{.*}}
// CHECK-NEXT:    %[[K:.*]] = memref.dim %a, %{{.*}}
// CHECK-NEXT:    %[[N:.*]] = memref.dim %b, %{{.*}}
// CHECK-NEXT:    scf.for %[[I:.*]] = %{{.*}} to %[[M]]
// CHECK-NEXT:      scf.for %[[P:.*]] = %{{.*}} to %[[K]]
// CHECK-NEXT:        %[[A:.*]] = memref.load %a[%[[I]], %[[P]]]
// CHECK-NEXT:        scf.for %[[J:.*]] = %{{.*}} to %[[N]]
// CHECK-NEXT:          %[[C:.*]] = memref.load %c[%[[I]], %[[J]]]
// CHECK-NEXT:          %[[B:.*]] = memref.load %b[%[[P]], %[[J]]]
// CHECK-NEXT:          %[[T:.*]] = arith.mulf %[[A]], %[[B]] : f64
// CHECK-NEXT:          %[[S:.*]] = arith.addf %[[C]], %[[T]] : f64
// CHECK-NEXT:          memref.store %[[S]], %c[%[[I]], %[[J]]]
// CHECK-NOT:     linalg.matmul
// CHECK-NOT:     ad.gemm

// BLAS-LABEL: func.func @mm
// BLAS:         %[[DONE:.*]] = ad.gemm %a, %b, %c : memref<?x?xf64>, memref<?x?xf64, strided<[?, ?], offset: ?>>, memref<?x?xf64> -> i1
// BLAS-NEXT:    %[[TRUE:.*]] = arith.constant true
// BLAS-NEXT:    %[[TODO:.*]] = arith.xori %[[DONE]], %[[TRUE]] : i1
// BLAS-NEXT:    scf.if %[[TODO]] {
// BLAS:           scf.for

// unchecked=true (what the JIT lowers, after differentiation): the nest's
// accesses are unchecked, their indices being in bounds by the size matches
// (i < dim(a, 0) = dim(c, 0), p < dim(a, 1) = dim(b, 0), j < dim(b, 1) =
// dim(c, 1)); the nest has no stop, nothing for LLVM to unswitch over.
// UNCHECKED-LABEL: func.func @mm
// UNCHECKED-COUNT-3: ad.size_match
// UNCHECKED:         memref.load %a[%{{.*}}, %{{.*}}] {ad.unchecked}
// UNCHECKED:           memref.load %c[%{{.*}}, %{{.*}}] {ad.unchecked}
// UNCHECKED-NEXT:      memref.load %b[%{{.*}}, %{{.*}}] {ad.unchecked}
// UNCHECKED:           memref.store %{{.*}}, %c[%{{.*}}, %{{.*}}] {ad.unchecked}

// The LLVM lowering of a module holding linalg.matmul lowers it that way:
// the three size matches are the function's only stops.
// LLVM-NEST-LABEL: define void @"u.mm"
// LLVM-NEST-COUNT-3: call void @"__adpasses_oob"
// LLVM-NEST-NOT:     call void @"__adpasses_oob"
// LLVM-NEST:       }

// LLVM-LABEL: define void @"u.mm"
// LLVM:         icmp ne i64
// LLVM:         call void @"__adpasses_oob"(i64 0, i64 %"a.size1", i64 -2, i64 %"b.size0")
// LLVM-NOT:     cblas

// LLVM-BLAS-LABEL: define void @"u.mm"
// LLVM-BLAS:      fcmp oge double %{{.*}}, 0x4080000000000000
// LLVM-BLAS:      call void @"adpasses_cblas_dgemm"(i32 101, i32 %{{.*}}, i32 %{{.*}}, i64 %{{.*}}, i64 %{{.*}}, i64 %{{.*}}, double 0x3ff0000000000000
func.func @mm(%a: memref<?x?xf64>, %b: memref<?x?xf64, strided<[?, ?], offset: ?>>, %c: memref<?x?xf64>) {
  linalg.matmul ins(%a, %b : memref<?x?xf64>, memref<?x?xf64, strided<[?, ?], offset: ?>>) outs(%c : memref<?x?xf64>)
  func.return
}
