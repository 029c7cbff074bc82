// Fuzzer seed 2604 (long run): the rule of math.fpowi computed n * a^(n-1),
// which is 0 * inf = NaN for n = 0 at a = 0 (x0[0] is 0 after the first
// iteration). d a^0 = 0.
// RUN: ad-run %s | filecheck %s
// Found by python -m adpasses.tools.fuzz (seed 2604), shrunk.
// Failure: wrong gradient: shadow of buffer 0 (%x0) element 0: ours nan, finite differences 0.0 (|FD(h)-FD(2h)| = 0.0e+00)
// Activities ['dup'] -> []; options Options(policy='minimal', activity=True, with_primal=False, opt_level=3, boundscheck=True).
// @main prints every primal value and derivative with `ok 1` when it matches the
// Python evaluation of @f (below) or central finite differences (docs/fuzzing.md).
//
// def f(x0):
//     for i2 in range((0), (2), 1):
//         x0[(i2)] = (_powi(x0.item((0)), 0) * _floor(0.5))
//     return ()

func.func @f(%x0: memref<?xf64>) {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c1 = arith.constant 1 : index
  %pw5 = arith.constant 0 : i32
  %cst7 = arith.constant 5.00000000000000000e-01 : f64
  scf.for %i2 = %c0 to %c2 step %c1 {
    %t4 = memref.load %x0[%c0] : memref<?xf64>
    %t3 = math.fpowi %t4, %pw5 : f64, i32
    %t6 = math.floor %cst7 : f64
    %t2 = arith.mulf %t3, %t6 : f64
    memref.store %t2, %x0[%i2] : memref<?xf64>
    scf.yield
  }
  func.return
}

func.func @main() {
  %k2 = arith.constant 2 : index
  %buf1 = memref.alloc(%k2) : memref<?xf64>
  %k3 = arith.constant 1.49899459370469668e-01 : f64
  %k4 = arith.constant 0 : index
  memref.store %k3, %buf1[%k4] : memref<?xf64>
  %k5 = arith.constant -1.85647721988156267e-01 : f64
  %k6 = arith.constant 1 : index
  memref.store %k5, %buf1[%k6] : memref<?xf64>
  %arg7 = memref.reinterpret_cast %buf1 to offset: [%k4], sizes: [%k2], strides: [%k6] : memref<?xf64> to memref<?xf64>
  func.call @f(%arg7) : (memref<?xf64>) -> ()
  %v8 = memref.load %buf1[%k4] : memref<?xf64>
  %k12 = arith.constant 0.00000000000000000e+00 : f64
  %d9 = arith.subf %v8, %k12 : f64
  %a10 = math.absf %d9 : f64
  %k13 = arith.constant 3.00000000000000039e-09 : f64
  %ok11 = arith.cmpf ole, %a10, %k13 : f64
  printf.print_format "primal buffer 0 element 0 = {} (expected 0): ok {}\n", %v8 : f64, %ok11 : i1
  %v14 = memref.load %buf1[%k6] : memref<?xf64>
  %d15 = arith.subf %v14, %k12 : f64
  %a16 = math.absf %d15 : f64
  %ok17 = arith.cmpf ole, %a16, %k13 : f64
  printf.print_format "primal buffer 0 element 1 = {} (expected 0): ok {}\n", %v14 : f64, %ok17 : i1
  %buf18 = memref.alloc(%k2) : memref<?xf64>
  memref.store %k3, %buf18[%k4] : memref<?xf64>
  memref.store %k5, %buf18[%k6] : memref<?xf64>
  %buf19 = memref.alloc(%k2) : memref<?xf64>
  %k20 = arith.constant -3.03376721479625633e-01 : f64
  memref.store %k20, %buf19[%k4] : memref<?xf64>
  %k21 = arith.constant -1.59479595295696686e+00 : f64
  memref.store %k21, %buf19[%k6] : memref<?xf64>
  %arg22 = memref.reinterpret_cast %buf18 to offset: [%k4], sizes: [%k2], strides: [%k6] : memref<?xf64> to memref<?xf64>
  %arg23 = memref.reinterpret_cast %buf19 to offset: [%k4], sizes: [%k2], strides: [%k6] : memref<?xf64> to memref<?xf64>
  ad.autodiff @f(%arg22, %arg23) {activity = [dup], ret_activity = []} : (memref<?xf64>, memref<?xf64>) -> ()
  %v24 = memref.load %buf18[%k4] : memref<?xf64>
  %d25 = arith.subf %v24, %k12 : f64
  %a26 = math.absf %d25 : f64
  %ok27 = arith.cmpf ole, %a26, %k13 : f64
  printf.print_format "gradient's primal buffer 0 element 0 = {} (expected 0): ok {}\n", %v24 : f64, %ok27 : i1
  %v28 = memref.load %buf18[%k6] : memref<?xf64>
  %d29 = arith.subf %v28, %k12 : f64
  %a30 = math.absf %d29 : f64
  %ok31 = arith.cmpf ole, %a30, %k13 : f64
  printf.print_format "gradient's primal buffer 0 element 1 = {} (expected 0): ok {}\n", %v28 : f64, %ok31 : i1
  %v32 = memref.load %buf19[%k4] : memref<?xf64>
  %d33 = arith.subf %v32, %k12 : f64
  %a34 = math.absf %d33 : f64
  %k36 = arith.constant 3.00000000000000039e-08 : f64
  %ok35 = arith.cmpf ole, %a34, %k36 : f64
  printf.print_format "shadow of buffer 0 (x0) element 0 = {} (expected 0): ok {}\n", %v32 : f64, %ok35 : i1
  %v37 = memref.load %buf19[%k6] : memref<?xf64>
  %d38 = arith.subf %v37, %k12 : f64
  %a39 = math.absf %d38 : f64
  %ok40 = arith.cmpf ole, %a39, %k36 : f64
  printf.print_format "shadow of buffer 0 (x0) element 1 = {} (expected 0): ok {}\n", %v37 : f64, %ok40 : i1
  func.return
}

// CHECK: primal buffer 0 element 0 = {{.*}}: ok 1
// CHECK: primal buffer 0 element 1 = {{.*}}: ok 1
// CHECK: gradient's primal buffer 0 element 0 = {{.*}}: ok 1
// CHECK: gradient's primal buffer 0 element 1 = {{.*}}: ok 1
// CHECK: shadow of buffer 0 (x0) element 0 = {{.*}}: ok 1
// CHECK: shadow of buffer 0 (x0) element 1 = {{.*}}: ok 1
