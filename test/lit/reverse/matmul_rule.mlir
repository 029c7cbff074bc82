// RUN: ad-opt %s --reverse | filecheck %s
// The reverse rule of the matrix product (reverse/rules/linalg.py): with
// an output that shares no memory with the inputs (noalias arguments),
// linalg.matmul stays a product through differentiation and its reverse is
// two products on the shadows, the transposes being views:
//   dA += dC @ B^T,   dB += A^T @ dC   (dC unchanged: C += A @ B).
// What the reverse reads of A and B is read in place when nothing writes
// them later; @overwritten stores into B after the product, so B's
// contents are snapshot before it (a tape) and restored into a scratch
// buffer for dA; A is still read in place.

// CHECK-LABEL: func.func @mm_grad_ddd_(
// CHECK-NOT:     scf.for
// CHECK:         linalg.matmul ins(%a, %b : memref<?x?xf64>, memref<?x?xf64>) outs(%c : memref<?x?xf64>)
// CHECK-NEXT:    %{{.*}}, %[[OB:[0-9a-z_]+]], %[[B0:[0-9a-z_]+]], %[[B1:[0-9a-z_]+]], %[[SB0:[0-9a-z_]+]], %[[SB1:[0-9a-z_]+]] = memref.extract_strided_metadata %b
// CHECK-NEXT:    %[[BT:[0-9a-z_]+]] = memref.reinterpret_cast %b to offset: [%[[OB]]], sizes: [%[[B1]], %[[B0]]], strides: [%[[SB1]], %[[SB0]]]
// CHECK-NEXT:    linalg.matmul ins(%dc, %[[BT]] : memref<?x?xf64>, memref<?x?xf64, strided<[?, ?], offset: ?>>) outs(%da : memref<?x?xf64>)
// CHECK-NEXT:    %{{.*}}, %[[OA:[0-9a-z_]+]], %[[A0:[0-9a-z_]+]], %[[A1:[0-9a-z_]+]], %[[SA0:[0-9a-z_]+]], %[[SA1:[0-9a-z_]+]] = memref.extract_strided_metadata %a
// CHECK-NEXT:    %[[AT:[0-9a-z_]+]] = memref.reinterpret_cast %a to offset: [%[[OA]]], sizes: [%[[A1]], %[[A0]]], strides: [%[[SA1]], %[[SA0]]]
// CHECK-NEXT:    linalg.matmul ins(%[[AT]], %dc : memref<?x?xf64, strided<[?, ?], offset: ?>>, memref<?x?xf64>) outs(%db : memref<?x?xf64>)
// CHECK-NEXT:    func.return
func.func @mm(%a: memref<?x?xf64> {ad.noalias}, %b: memref<?x?xf64> {ad.noalias}, %c: memref<?x?xf64> {ad.noalias}) {
  linalg.matmul ins(%a, %b : memref<?x?xf64>, memref<?x?xf64>) outs(%c : memref<?x?xf64>)
  func.return
}

// CHECK-LABEL: func.func @overwritten_grad_ddd_(
// CHECK:         %snapshot_b = memref.alloc(%{{.*}}) {ad.workspace} : memref<?xf64>
// CHECK:         scf.for
// CHECK:             memref.load %b[
// CHECK:             memref.store %{{.*}}, %snapshot_b[
// CHECK:         linalg.matmul ins(%a, %b : memref<?x?xf64>, memref<?x?xf64>) outs(%c : memref<?x?xf64>)
// CHECK:         memref.store %{{.*}}, %b[
// CHECK:         %b_at_call = memref.alloc(%{{.*}}, %{{.*}}) {ad.workspace} : memref<?x?xf64>
// CHECK:             memref.load %snapshot_b[
// CHECK:             memref.store %{{.*}}, %b_at_call[
// CHECK:         %[[BT:[0-9a-z_]+]] = memref.reinterpret_cast %b_at_call
// CHECK-NEXT:    linalg.matmul ins(%dc, %[[BT]] : {{.*}}) outs(%da : memref<?x?xf64>)
// CHECK:         %[[AT:[0-9a-z_]+]] = memref.reinterpret_cast %a
// CHECK-NEXT:    linalg.matmul ins(%[[AT]], %dc : {{.*}}) outs(%db : memref<?x?xf64>)
// CHECK-NEXT:    memref.dealloc %b_at_call {ad.workspace}
func.func @overwritten(%a: memref<?x?xf64> {ad.noalias}, %b: memref<?x?xf64> {ad.noalias}, %c: memref<?x?xf64> {ad.noalias}) {
  linalg.matmul ins(%a, %b : memref<?x?xf64>, memref<?x?xf64>) outs(%c : memref<?x?xf64>)
  %c0 = arith.constant 0 : index
  %z = arith.constant 0.0 : f64
  memref.store %z, %b[%c0, %c0] : memref<?x?xf64>
  func.return
}

func.func @main(%a: memref<?x?xf64>, %da: memref<?x?xf64>, %b: memref<?x?xf64>, %db: memref<?x?xf64>, %c: memref<?x?xf64>, %dc: memref<?x?xf64>) {
  ad.autodiff @mm(%a, %da, %b, %db, %c, %dc) {activity = [dup, dup, dup], ret_activity = []} : (memref<?x?xf64>, memref<?x?xf64>, memref<?x?xf64>, memref<?x?xf64>, memref<?x?xf64>, memref<?x?xf64>) -> ()
  ad.autodiff @overwritten(%a, %da, %b, %db, %c, %dc) {activity = [dup, dup, dup], ret_activity = []} : (memref<?x?xf64>, memref<?x?xf64>, memref<?x?xf64>, memref<?x?xf64>, memref<?x?xf64>, memref<?x?xf64>) -> ()
  func.return
}
