// Affine code is lowered to scf before differentiating (ad-lower-affine;
// xDSL's lower-affine fails on bounds with operands): the gradient of
// sum(x[i-1] * x[i]) over affine.for/affine.load loops like scf.for. ad-run
// lowers affine in the module too (affine used to be unknown to ad-run, and
// `--reverse` gave a zero gradient).
// RUN: ad-opt %s --reverse | filecheck %s
// RUN: ad-opt %s -p ad-lower-affine | filecheck %s --check-prefix=LOWER
// RUN: ad-run %s | filecheck %s --check-prefix=OUT

// LOWER-LABEL: func.func @f(%x: memref<?xf64>, %n: index) -> f64
// LOWER-NOT:     affine.
// LOWER:         %r = scf.for %i = %{{.*}} to %n step %{{.*}} iter_args(%acc = %z) -> (f64) {
// LOWER:           %v = memref.load %x[%{{.*}}] : memref<?xf64>
// LOWER:           %u = memref.load %x[%i] : memref<?xf64>

// CHECK-LABEL: func.func @f_grad_dc_a(%x: memref<?xf64>, %dx: memref<?xf64>, %n: index, %seed: f64)
// CHECK-NOT:     affine.
// CHECK:         scf.for
// CHECK:           memref.load %dx
// CHECK:           memref.store %{{.*}}, %dx

// x = [1, 2, 3, 4], n = 4: d/dx sum_{i=1..3} x[i-1] x[i] = [2, 4, 6, 3]
// OUT: dx = 2 4 6 3

func.func @f(%x: memref<?xf64>, %n: index) -> f64 {
  %z = arith.constant 0.0 : f64
  %r = affine.for %i = 1 to %n iter_args(%acc = %z) -> (f64) {
    %v = affine.load %x[%i - 1] : memref<?xf64>
    %u = affine.load %x[%i] : memref<?xf64>
    %p = arith.mulf %v, %u : f64
    %s = arith.addf %acc, %p : f64
    affine.yield %s : f64
  }
  func.return %r : f64
}

func.func @main() {
  %c4 = arith.constant 4 : index
  %z = arith.constant 0.0 : f64
  %one = arith.constant 1.0 : f64
  %x = memref.alloc(%c4) : memref<?xf64>
  %dx = memref.alloc(%c4) : memref<?xf64>
  affine.for %i = 0 to 4 {
    %ii = arith.index_cast %i : index to i64
    %f = arith.sitofp %ii : i64 to f64
    %v = arith.addf %f, %one : f64
    affine.store %v, %x[%i] : memref<?xf64>
    affine.store %z, %dx[%i] : memref<?xf64>
  }
  ad.autodiff @f(%x, %dx, %c4, %one) {activity = [dup, const], ret_activity = [active]} : (memref<?xf64>, memref<?xf64>, index, f64) -> ()
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %d0 = memref.load %dx[%c0] : memref<?xf64>
  %d1 = memref.load %dx[%c1] : memref<?xf64>
  %d2 = memref.load %dx[%c2] : memref<?xf64>
  %d3 = memref.load %dx[%c3] : memref<?xf64>
  printf.print_format "dx = {} {} {} {}\n", %d0 : f64, %d1 : f64, %d2 : f64, %d3 : f64
  memref.dealloc %x : memref<?xf64>
  memref.dealloc %dx : memref<?xf64>
  func.return
}
