// RUN: ad-opt %s --forward | filecheck %s --check-prefix=IR
// RUN: ad-run %s | filecheck %s
// A function returning a memref (an allocation, a view of an argument, a
// buffer independent of the inputs): each dup result's tangent memref is
// returned beside it (the tangent of its memory: the tangent allocation,
// the same view of the argument's tangent, fresh zeros).
// Hand derivation: y[i] = x[i]*x[i], dy[i] = 2*x[i]*dx[i]; v = x[1:], dv = dx[1:].

// IR-LABEL: func.func @squares_fwd_d_ddd(
// IR-SAME:      %[[X:[^:]*]]: memref<?xf64>, %[[DX:[^:]*]]: memref<?xf64>)
// IR:         %[[Y:.*]] = memref.alloc(%{{.*}}) : memref<?xf64>
// IR-NEXT:    %[[DY:.*]] = memref.alloc(%{{.*}}) : memref<?xf64>
// IR:         %[[V:.*]] = memref.subview %[[X]]
// IR-NEXT:    %[[DV:.*]] = memref.subview %[[DX]]
// IR:         %[[Z:.*]] = memref.alloc(%{{.*}}) : memref<?xf64>
// IR:         %[[DZ:.*]] = memref.alloc(%{{.*}}) : memref<?xf64>
// IR:         scf.for
// IR:           memref.store %{{.*}}, %[[DZ]]
// IR:         func.return %[[Y]], %[[DY]], %[[V]], %[[DV]], %[[Z]], %[[DZ]] :

func.func @squares(%x: memref<?xf64>) -> (memref<?xf64>, memref<?xf64, strided<[1], offset: ?>>, memref<?xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?xf64>
  %y = memref.alloc(%n) : memref<?xf64>
  scf.for %i = %c0 to %n step %c1 {
    %a = memref.load %x[%i] : memref<?xf64>
    %s = arith.mulf %a, %a : f64
    memref.store %s, %y[%i] : memref<?xf64>
  }
  %m = arith.subi %n, %c1 : index
  %v = memref.subview %x[1] [%m] [1] : memref<?xf64> to memref<?xf64, strided<[1], offset: ?>>
  %z = memref.alloc(%n) : memref<?xf64>
  func.return %y, %v, %z : memref<?xf64>, memref<?xf64, strided<[1], offset: ?>>, memref<?xf64>
}

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %x = memref.alloc() : memref<2xf64>
  %dx = memref.alloc() : memref<2xf64>
  %three = arith.constant 3.0 : f64
  %four = arith.constant 4.0 : f64
  %half = arith.constant 0.5 : f64
  %two = arith.constant 2.0 : f64
  memref.store %three, %x[%c0] : memref<2xf64>
  memref.store %four, %x[%c1] : memref<2xf64>
  memref.store %half, %dx[%c0] : memref<2xf64>
  memref.store %two, %dx[%c1] : memref<2xf64>
  %xd = memref.cast %x : memref<2xf64> to memref<?xf64>
  %dxd = memref.cast %dx : memref<2xf64> to memref<?xf64>
  %y, %dy, %v, %dv, %z, %dz = ad.fwddiff @squares(%xd, %dxd) {activity = [dup], ret_activity = [dup, dup, dup]} : (memref<?xf64>, memref<?xf64>) -> (memref<?xf64>, memref<?xf64>, memref<?xf64, strided<[1], offset: ?>>, memref<?xf64, strided<[1], offset: ?>>, memref<?xf64>, memref<?xf64>)
  %y1 = memref.load %y[%c1] : memref<?xf64>
  %dy0 = memref.load %dy[%c0] : memref<?xf64>
  %dy1 = memref.load %dy[%c1] : memref<?xf64>
  %dv0 = memref.load %dv[%c0] : memref<?xf64, strided<[1], offset: ?>>
  %dz1 = memref.load %dz[%c1] : memref<?xf64>
  // CHECK: y1 = 16 dy0 = 3 dy1 = 16 dv0 = 2 dz1 = 0
  printf.print_format "y1 = {} dy0 = {} dy1 = {} dv0 = {} dz1 = {}\n", %y1 : f64, %dy0 : f64, %dy1 : f64, %dv0 : f64, %dz1 : f64
  func.return
}
