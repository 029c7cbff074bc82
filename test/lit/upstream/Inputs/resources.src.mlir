// Constants as upstream MLIR prints them when they are resources
// (`dense_resource<key>`, the bytes in the `{-# dialect_resources #-}` block
// at the end of the file): memref.global initial values of f64 and i32
// elements, read as dense elements, differentiated and run (an
// arith.constant of one: resource_errors.mlir).
// RUN: ad-run %s | filecheck %s
// RUN: ad-opt %s | filecheck %s --check-prefix=OPT
// f = sum x_i w_i + k0 k1 = (1.5 - 2 + 0.25) + 12 at x = 1; df/dx = w
// CHECK: f = 11.75
// CHECK-NEXT: dx = 1.5 -2 0.25
// OPT: initial_value = dense<[1.500000e+00, -2.000000e+00, 2.500000e-01]> : tensor<3xf64>
// OPT: initial_value = dense<[3, 4]> : tensor<2xi32>
// OPT-NOT: dense_resource
// OPT-NOT: dialect_resources
memref.global "private" constant @w : memref<3xf64> = dense_resource<weights>
memref.global "private" constant @k : memref<2xi32> = dense_resource<ints> {alignment = 64 : i64}
func.func @f(%x: memref<?xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %zero = arith.constant 0.0 : f64
  %w = memref.get_global @w : memref<3xf64>
  %k = memref.get_global @k : memref<2xi32>
  %s = scf.for %i = %c0 to %c3 step %c1 iter_args(%acc = %zero) -> (f64) {
    %xi = memref.load %x[%i] : memref<?xf64>
    %wi = memref.load %w[%i] : memref<3xf64>
    %p = arith.mulf %xi, %wi : f64
    %a = arith.addf %acc, %p : f64
    scf.yield %a : f64
  }
  %k0 = memref.load %k[%c0] : memref<2xi32>
  %k1 = memref.load %k[%c1] : memref<2xi32>
  %kk = arith.muli %k0, %k1 : i32
  %kf = arith.sitofp %kk : i32 to f64
  %r = arith.addf %s, %kf : f64
  return %r : f64
}
func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %one = arith.constant 1.0 : f64
  %zero = arith.constant 0.0 : f64
  %x = memref.alloc(%c3) : memref<?xf64>
  %dx = memref.alloc(%c3) : memref<?xf64>
  scf.for %i = %c0 to %c3 step %c1 {
    memref.store %one, %x[%i] : memref<?xf64>
    memref.store %zero, %dx[%i] : memref<?xf64>
  }
  %v = func.call @f(%x) : (memref<?xf64>) -> f64
  "printf.print_format"(%v) {format_str = "f = {}\0A"} : (f64) -> ()
  "ad.autodiff"(%x, %dx, %one) <{callee = @f, activity = ["dup"], ret_activity = ["active"]}> : (memref<?xf64>, memref<?xf64>, f64) -> ()
  %d0 = memref.load %dx[%c0] : memref<?xf64>
  %d1 = memref.load %dx[%c1] : memref<?xf64>
  %d2 = memref.load %dx[%c2] : memref<?xf64>
  "printf.print_format"(%d0, %d1, %d2) {format_str = "dx = {} {} {}\0A"} : (f64, f64, f64) -> ()
  return
}
{-#
  dialect_resources: {
    builtin: {
      weights: "0x08000000000000000000F83F00000000000000C0000000000000D03F",
      ints: "0x040000000300000004000000"
    }
  }
#-}
