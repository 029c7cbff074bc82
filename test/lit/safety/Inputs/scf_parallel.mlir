func.func @f(%x: memref<4xf64>, %y: memref<4xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  "scf.parallel"(%c0, %c4, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %v = memref.load %x[%i] : memref<4xf64>
    %w = arith.mulf %v, %v : f64
    memref.store %w, %y[%i] : memref<4xf64>
    "scf.reduce"() : () -> ()
  }) : (index, index, index) -> ()
  func.return
}
func.func @g(%x: memref<4xf64>, %dx: memref<4xf64>, %y: memref<4xf64>, %dy: memref<4xf64>) {
  ad.autodiff @f(%x, %dx, %y, %dy) {activity = [dup, dup], ret_activity = []} : (memref<4xf64>, memref<4xf64>, memref<4xf64>, memref<4xf64>) -> ()
  func.return
}
