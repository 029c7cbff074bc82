// RUN: ad-opt %s --forward | filecheck %s --check-prefix=IR
// RUN: ad-run %s | filecheck %s
// Enzyme-MLIR ForwardMode/affine_parallel.mlir: y[i] = x[i]^2 in
// affine.parallel (generic form: xDSL 0.74 has no custom syntax for it),
// lowered to scf.parallel by ad-lower-affine and expanded into scf.for.
// Hand derivation: dy[i] = 2 x[i] dx[i]; x = (1, 2, 3), dx = (0.5, -1, 2):
// y = (1, 4, 9), dy = (1, -4, 12).

// IR-LABEL: func.func @square_fwd_ddc_(
// IR-SAME:  %[[X:[a-z0-9_]+]]: memref<?xf64>, %[[DX:[a-z0-9_]+]]: memref<?xf64>, %[[Y:[a-z0-9_]+]]: memref<?xf64>, %[[DY:[a-z0-9_]+]]: memref<?xf64>, %{{[a-z0-9_]+}}: index)
// IR-NOT:     parallel
// IR:         scf.for %[[I:[a-z0-9_]+]] =
// IR:           memref.load %[[DX]][%[[I]]]
// IR:           memref.store %{{.*}}, %[[DY]][%[[I]]]
func.func @square(%x: memref<?xf64>, %y: memref<?xf64>, %n: index) {
  "affine.parallel"(%n) <{lowerBoundsMap = affine_map<() -> (0)>, lowerBoundsGroups = dense<1> : vector<1xi32>, upperBoundsMap = affine_map<()[s0] -> (s0)>, upperBoundsGroups = dense<1> : vector<1xi32>, steps = [1 : i64], reductions = []}> ({
  ^bb0(%i: index):
    %v = affine.load %x[%i] : memref<?xf64>
    %s = arith.mulf %v, %v : f64
    affine.store %s, %y[%i] : memref<?xf64>
    "affine.yield"() : () -> ()
  }) : (index) -> ()
  func.return
}

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %one = arith.constant 1.0 : f64
  %two = arith.constant 2.0 : f64
  %three = arith.constant 3.0 : f64
  %half = arith.constant 0.5 : f64
  %mone = arith.constant -1.0 : f64
  %x = memref.alloc(%c3) : memref<?xf64>
  %dx = memref.alloc(%c3) : memref<?xf64>
  %y = memref.alloc(%c3) : memref<?xf64>
  %dy = memref.alloc(%c3) : memref<?xf64>
  memref.store %one, %x[%c0] : memref<?xf64>
  memref.store %two, %x[%c1] : memref<?xf64>
  memref.store %three, %x[%c2] : memref<?xf64>
  memref.store %half, %dx[%c0] : memref<?xf64>
  memref.store %mone, %dx[%c1] : memref<?xf64>
  memref.store %two, %dx[%c2] : memref<?xf64>
  ad.fwddiff @square(%x, %dx, %y, %dy, %c3) {activity = [dup, dup, const], ret_activity = []} : (memref<?xf64>, memref<?xf64>, memref<?xf64>, memref<?xf64>, index) -> ()
  %y0 = memref.load %y[%c0] : memref<?xf64>
  %y1 = memref.load %y[%c1] : memref<?xf64>
  %y2 = memref.load %y[%c2] : memref<?xf64>
  %d0 = memref.load %dy[%c0] : memref<?xf64>
  %d1 = memref.load %dy[%c1] : memref<?xf64>
  %d2 = memref.load %dy[%c2] : memref<?xf64>
  // CHECK: y = 1 4 9 dy = 1 -4 12
  printf.print_format "y = {} {} {} dy = {} {} {}\n", %y0 : f64, %y1 : f64, %y2 : f64, %d0 : f64, %d1 : f64, %d2 : f64
  memref.dealloc %x : memref<?xf64>
  memref.dealloc %dx : memref<?xf64>
  memref.dealloc %y : memref<?xf64>
  memref.dealloc %dy : memref<?xf64>
  func.return
}
