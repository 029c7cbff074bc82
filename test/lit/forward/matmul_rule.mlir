// RUN: ad-opt -p ad-forward %s | filecheck %s
// The forward rule of the matrix product (forward/rules/linalg.py): with an
// output that shares no memory with the inputs, linalg.matmul stays a
// product and its tangent is two products into C's tangent, after the
// primal product: dC += dA @ B + A @ dB. Only operands whose memory
// carries derivatives contribute (@const_b: B is const, one product).

// CHECK-LABEL: func.func @mm_fwd_dcd_(
// CHECK:         linalg.matmul ins(%a, %b : memref<?x?xf64>, memref<?x?xf64>) outs(%c : memref<?x?xf64>)
// CHECK-NEXT:    linalg.matmul ins(%da, %b : memref<?x?xf64>, memref<?x?xf64>) outs(%dc : memref<?x?xf64>)
// CHECK-NEXT:    func.return

// CHECK-LABEL: func.func @mm_fwd_ddd_(
// CHECK:         linalg.matmul ins(%a, %b : memref<?x?xf64>, memref<?x?xf64>) outs(%c : memref<?x?xf64>)
// CHECK-NEXT:    linalg.matmul ins(%da, %b : memref<?x?xf64>, memref<?x?xf64>) outs(%dc : memref<?x?xf64>)
// CHECK-NEXT:    linalg.matmul ins(%a, %db : memref<?x?xf64>, memref<?x?xf64>) outs(%dc : memref<?x?xf64>)
// CHECK-NEXT:    func.return
func.func @mm(%a: memref<?x?xf64> {ad.noalias}, %b: memref<?x?xf64> {ad.noalias}, %c: memref<?x?xf64> {ad.noalias}) {
  linalg.matmul ins(%a, %b : memref<?x?xf64>, memref<?x?xf64>) outs(%c : memref<?x?xf64>)
  func.return
}

func.func @main(%a: memref<?x?xf64>, %da: memref<?x?xf64>, %b: memref<?x?xf64>, %db: memref<?x?xf64>, %c: memref<?x?xf64>, %dc: memref<?x?xf64>) {
  ad.fwddiff @mm(%a, %da, %b, %db, %c, %dc) {activity = [dup, dup, dup], ret_activity = []} : (memref<?x?xf64>, memref<?x?xf64>, memref<?x?xf64>, memref<?x?xf64>, memref<?x?xf64>, memref<?x?xf64>) -> ()
  ad.fwddiff @mm(%a, %da, %b, %c, %dc) {activity = [dup, const, dup], ret_activity = []} : (memref<?x?xf64>, memref<?x?xf64>, memref<?x?xf64>, memref<?x?xf64>, memref<?x?xf64>) -> ()
  func.return
}
