// ad-simplify: xDSL's canonicalize and cse on the gradients the reverse
// pipeline builds (marked ad.gradient_of), with every checked op pinned
// while they run: constants fold and repeats merge, but a load whose value
// is unused keeps its check (xDSL's passes alone would erase it; the
// pipeline's ad-dead-forward after this step decides what goes). The
// user's functions stay as written.
// RUN: ad-opt %s -p ad-simplify | filecheck %s
// RUN: ad-opt %s -p canonicalize,cse | filecheck %s --check-prefix=XDSL

// CHECK-LABEL: func.func @user(
// CHECK:         %a = arith.addi %c1, %c2 : index
// CHECK:         %b = arith.addi %c1, %c2 : index
// CHECK-LABEL: func.func @f_grad_dc_a(
// CHECK-NEXT:    %c2 = arith.constant 2 : index
// CHECK-NEXT:    %unused = memref.load %x[%c2] : memref<?xf64>
// CHECK-NEXT:    %[[THREE:.*]] = arith.constant 3 : index
// CHECK-NEXT:    %v = memref.load %x[%[[THREE]]] : memref<?xf64>
// CHECK-NEXT:    %w = arith.addf %v, %v : f64
// CHECK-NEXT:    func.return %w : f64
// CHECK-NOT:     ad.keep

// XDSL-LABEL: func.func @f_grad_dc_a(
// XDSL-NOT:     %unused
func.func @user(%x: memref<?xf64>) -> f64 {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %a = arith.addi %c1, %c2 : index
  %b = arith.addi %c1, %c2 : index
  %v = memref.load %x[%a] : memref<?xf64>
  %u = memref.load %x[%b] : memref<?xf64>
  %w = arith.addf %v, %u : f64
  func.return %w : f64
}
func.func @f_grad_dc_a(%x: memref<?xf64>) -> f64 attributes {ad.gradient_of = {primal = @f, activity = ["dup"], ret_activity = ["active"]}} {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %a = arith.addi %c1, %c2 : index
  %unused = memref.load %x[%c2] : memref<?xf64>
  %b = arith.addi %c1, %c2 : index
  %v = memref.load %x[%b] : memref<?xf64>
  %u = memref.load %x[%b] : memref<?xf64>
  %w = arith.addf %v, %u : f64
  func.return %w : f64
}
