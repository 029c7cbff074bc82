// RUN: ad-opt %s --forward | filecheck %s --check-prefix=IR
// RUN: ad-run %s | filecheck %s
// Enzyme-MLIR ForwardMode/arg_attrs.mlir: a rank-0 f32 buffer argument with an
// argument attribute, returned through a load; the result is dup.
// Hand derivation: f(b, a) = a[]; d = da[]. a[] = 2.5, da[] = -0.75:
// (2.5, -0.75); b's tangent plays no part.

// The argument attribute is kept on the primal and given to its shadow.
// IR-LABEL: func.func @f_fwd_dd_d(
// IR-SAME:  %{{.*}}: f32, %{{.*}}: f32, %[[A:[a-z0-9_]+]]: memref<f32> {ad.noalias}, %[[DA:[a-z0-9_]+]]: memref<f32> {ad.noalias}) -> (f32, f32)
// IR:         %[[V:.*]] = memref.load %[[A]][] {{.*}}: memref<f32>
// IR-NEXT:    ad.keep %[[V]] : f32
// IR-NEXT:    %[[DV:.*]] = memref.load %[[DA]][] {{.*}}: memref<f32>
// IR-NEXT:    func.return %[[V]], %[[DV]] : f32, f32

func.func @f(%b: f32, %a: memref<f32> {ad.noalias}) -> f32 {
  %0 = memref.load %a[] : memref<f32>
  func.return %0 : f32
}

func.func @main() {
  %b = arith.constant 1.0 : f32
  %db = arith.constant 100.0 : f32
  %v = arith.constant 2.5 : f32
  %dv = arith.constant -0.75 : f32
  %a = memref.alloc() : memref<f32>
  %da = memref.alloc() : memref<f32>
  memref.store %v, %a[] : memref<f32>
  memref.store %dv, %da[] : memref<f32>
  %p, %t = ad.fwddiff @f(%b, %db, %a, %da) {activity = [dup, dup], ret_activity = [dup]} : (f32, f32, memref<f32>, memref<f32>) -> (f32, f32)
  %p64 = arith.extf %p : f32 to f64
  %t64 = arith.extf %t : f32 to f64
  // CHECK: y = 2.5 dy = -0.75
  printf.print_format "y = {} dy = {}\n", %p64 : f64, %t64 : f64
  memref.dealloc %a : memref<f32>
  memref.dealloc %da : memref<f32>
  func.return
}
