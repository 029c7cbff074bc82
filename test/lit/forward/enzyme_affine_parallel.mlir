// RUN: ad-run %s | filecheck %s
// RUN: ad-opt %s --forward | filecheck %s --check-prefix=IR
// Enzyme-MLIR ForwardMode/affine_parallel.mlir: y[i] = x[i]^2 in
// affine.parallel (generic form here; upstream's custom form parses too,
// test/lit/upstream/). ad-lower-affine makes it scf.parallel and
// ad-expand-upstream-ops a scf.for: dy = 2 x dx.
// x = [1, 2, 3], dx = [1, 1, 1]: y = [1, 4, 9], dy = [2, 4, 6]
// CHECK: y = 1 4 9 dy = 2 4 6
// IR-LABEL: func.func @square_fwd_ddc_(
// IR-NOT: affine.parallel
// IR: scf.for

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

func.func @dsquare(%x: memref<?xf64>, %dx: memref<?xf64>, %y: memref<?xf64>, %dy: memref<?xf64>, %n: index) {
  ad.fwddiff @square(%x, %dx, %y, %dy, %n) {activity = [dup, dup, const], ret_activity = []} : (memref<?xf64>, memref<?xf64>, memref<?xf64>, memref<?xf64>, index) -> ()
  func.return
}

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %one = arith.constant 1.0 : f64
  %x = memref.alloc(%c3) : memref<?xf64>
  %dx = memref.alloc(%c3) : memref<?xf64>
  %y = memref.alloc(%c3) : memref<?xf64>
  %dy = memref.alloc(%c3) : memref<?xf64>
  scf.for %i = %c0 to %c3 step %c1 {
    %ii = arith.index_cast %i : index to i64
    %f = arith.sitofp %ii : i64 to f64
    %v = arith.addf %f, %one : f64
    memref.store %v, %x[%i] : memref<?xf64>
    memref.store %one, %dx[%i] : memref<?xf64>
  }
  func.call @dsquare(%x, %dx, %y, %dy, %c3) : (memref<?xf64>, memref<?xf64>, memref<?xf64>, memref<?xf64>, index) -> ()
  %y0 = memref.load %y[%c0] : memref<?xf64>
  %y1 = memref.load %y[%c1] : memref<?xf64>
  %y2 = memref.load %y[%c2] : memref<?xf64>
  %d0 = memref.load %dy[%c0] : memref<?xf64>
  %d1 = memref.load %dy[%c1] : memref<?xf64>
  %d2 = memref.load %dy[%c2] : memref<?xf64>
  printf.print_format "y = {} {} {} dy = {} {} {}\n", %y0 : f64, %y1 : f64, %y2 : f64, %d0 : f64, %d1 : f64, %d2 : f64
  func.return
}
