// RUN: ad-opt %s --reverse | filecheck %s
// The reverse of a matrix product: linalg.matmul is lowered to its checked
// loop nest before differentiation (ad-expand-upstream-ops runs
// ad-lower-matmul), so the gradient repeats the size checks and reverses
// the loops: dA[i, p] += sum_j dC[i, j] B[p, j] (a loop-carried sum),
// dB[p, j] += A[i, p] dC[i, j], dC unchanged (C += A @ B adds to C).
// Here A and B may alias C (no ad.noalias), so the values of A and B the
// reverse reads are taped.

// CHECK-LABEL: func.func @mm_grad_ddd_(%a: memref<?x?xf64>, %da: memref<?x?xf64>, %b: memref<?x?xf64>, %db: memref<?x?xf64>, %c: memref<?x?xf64>, %dc: memref<?x?xf64>)
// CHECK:         ad.size_match %a[1 : index], %b[0 : index] "linalg.matmul (C += A @ B)"
// CHECK-NEXT:    ad.size_match %a[0 : index], %c[0 : index] "linalg.matmul (C += A @ B)"
// CHECK-NEXT:    ad.size_match %b[1 : index], %c[1 : index] "linalg.matmul (C += A @ B)"
// CHECK:         scf.for
// CHECK:           memref.store %{{.*}}, %c[%{{.*}}, %{{.*}}]
// The reverse nest.
// CHECK:         scf.for
// CHECK:             %[[A:.*]] = memref.load %tape[%{{.*}}]
// CHECK:             %[[SUM:.*]] = scf.for %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (f64) {
// CHECK:               %[[B:.*]] = memref.load %tape_1[%{{.*}}]
// CHECK:               %[[G:.*]] = memref.load %dc[%{{.*}}, %{{.*}}]
// CHECK:               %[[GB:.*]] = arith.mulf %[[G]], %[[B]] : f64
// CHECK-NEXT:          %[[GA:.*]] = arith.mulf %[[G]], %[[A]] : f64
// CHECK-NEXT:          %[[NEXT:.*]] = arith.addf %[[ACC]], %[[GB]] : f64
// CHECK-NEXT:          %[[DB:.*]] = memref.load %db[%{{.*}}, %{{.*}}]
// CHECK-NEXT:          %[[DB2:.*]] = arith.addf %[[DB]], %[[GA]] : f64
// CHECK-NEXT:          memref.store %[[DB2]], %db[%{{.*}}, %{{.*}}]
// CHECK:               scf.yield %[[NEXT]] : f64
// CHECK:             %[[DA:.*]] = memref.load %da[%{{.*}}, %{{.*}}]
// CHECK-NEXT:        %[[DA2:.*]] = arith.addf %[[DA]], %[[SUM]] : f64
// CHECK-NEXT:        memref.store %[[DA2]], %da[%{{.*}}, %{{.*}}]
// CHECK-NOT:     linalg.matmul
func.func @mm(%a: memref<?x?xf64>, %b: memref<?x?xf64>, %c: memref<?x?xf64>) {
  linalg.matmul ins(%a, %b : memref<?x?xf64>, memref<?x?xf64>) outs(%c : memref<?x?xf64>)
  func.return
}
func.func @main(%a: memref<?x?xf64>, %da: memref<?x?xf64>, %b: memref<?x?xf64>, %db: memref<?x?xf64>, %c: memref<?x?xf64>, %dc: memref<?x?xf64>) {
  ad.autodiff @mm(%a, %da, %b, %db, %c, %dc) {activity = [dup, dup, dup], ret_activity = []} : (memref<?x?xf64>, memref<?x?xf64>, memref<?x?xf64>, memref<?x?xf64>, memref<?x?xf64>, memref<?x?xf64>) -> ()
  func.return
}
