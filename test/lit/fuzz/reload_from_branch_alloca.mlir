// Fuzzer seed 2485 (long run): with the minimal cache policy, the load of
// %m0[5] in the loop was planned as a reload, which needs the alloca %m0
// (defined in the else branch) in the reverse sweep; a memref cannot be
// taped, so the min cut had no finite cut (ValueError). Such a load must
// be taped instead.
// RUN: ad-opt %s --reverse --no-activity | ad-run | filecheck %s
// Found by python -m adpasses.tools.fuzz (seed 2485), shrunk.
// Failure: compiler error: ValueError: no finite cut separates the needed values from the source
// Activities ['const'] -> []; options Options(policy='minimal', activity=False, with_primal=False, opt_level=3, boundscheck=True).
// @main prints every primal value and derivative with `ok 1` when it matches the
// Python evaluation of @f (below) or central finite differences (docs/fuzzing.md).
//
// def f(x0):
//     if _cmp_ult(1.0, -0.53):
//         pass
//     else:
//         m0 = _np.full((7,), 1.0)
//         for i1 in range((2), (4), 1):
//             v3 = _m.sin(m0.item((5)))
//     return ()

func.func @f(%x0: memref<?xf64>) {
  %cst2 = arith.constant 1.00000000000000000e+00 : f64
  %cst3 = arith.constant -5.30000000000000027e-01 : f64
  %c0 = arith.constant 0 : index
  %dim5 = memref.dim %x0, %c0 : memref<?xf64>
  %c7 = arith.constant 7 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %p1 = arith.cmpf ult, %cst2, %cst3 : f64
  scf.if %p1 {
    scf.yield
  } else {
    %m0 = memref.alloca(%dim5) : memref<?xf64>
    scf.for %fill6 = %c0 to %c7 step %c1 {
      memref.store %cst2, %m0[%fill6] : memref<?xf64>
      scf.yield
    }
    scf.for %i1 = %c2 to %c4 step %c1 {
      %t9 = memref.load %m0[%c5] : memref<?xf64>
      %t8 = math.sin %t9 : f64
      scf.yield
    }
    scf.yield
  }
  func.return
}

func.func @main() {
  %k2 = arith.constant 7 : index
  %buf1 = memref.alloc(%k2) : memref<?xf64>
  %k3 = arith.constant -7.31492026237870463e-01 : f64
  %k4 = arith.constant 0 : index
  memref.store %k3, %buf1[%k4] : memref<?xf64>
  %k5 = arith.constant -2.97901330027492417e-01 : f64
  %k6 = arith.constant 1 : index
  memref.store %k5, %buf1[%k6] : memref<?xf64>
  %k7 = arith.constant -7.23394308696667654e-02 : f64
  %k8 = arith.constant 2 : index
  memref.store %k7, %buf1[%k8] : memref<?xf64>
  %k9 = arith.constant 7.07777866579002435e-01 : f64
  %k10 = arith.constant 3 : index
  memref.store %k9, %buf1[%k10] : memref<?xf64>
  %k11 = arith.constant -5.42523684451715726e-01 : f64
  %k12 = arith.constant 4 : index
  memref.store %k11, %buf1[%k12] : memref<?xf64>
  %k13 = arith.constant -1.08737165088576448e+00 : f64
  %k14 = arith.constant 5 : index
  memref.store %k13, %buf1[%k14] : memref<?xf64>
  %k15 = arith.constant -1.11986056554113955e+00 : f64
  %k16 = arith.constant 6 : index
  memref.store %k15, %buf1[%k16] : memref<?xf64>
  %arg17 = memref.reinterpret_cast %buf1 to offset: [%k4], sizes: [%k2], strides: [%k6] : memref<?xf64> to memref<?xf64>
  func.call @f(%arg17) : (memref<?xf64>) -> ()
  %v18 = memref.load %buf1[%k4] : memref<?xf64>
  %d19 = arith.subf %v18, %k3 : f64
  %a20 = math.absf %d19 : f64
  %k22 = arith.constant 3.00000000000000039e-09 : f64
  %ok21 = arith.cmpf ole, %a20, %k22 : f64
  printf.print_format "primal buffer 0 element 0 = {} (expected -0.731492): ok {}\n", %v18 : f64, %ok21 : i1
  %v23 = memref.load %buf1[%k6] : memref<?xf64>
  %d24 = arith.subf %v23, %k5 : f64
  %a25 = math.absf %d24 : f64
  %ok26 = arith.cmpf ole, %a25, %k22 : f64
  printf.print_format "primal buffer 0 element 1 = {} (expected -0.297901): ok {}\n", %v23 : f64, %ok26 : i1
  %v27 = memref.load %buf1[%k8] : memref<?xf64>
  %d28 = arith.subf %v27, %k7 : f64
  %a29 = math.absf %d28 : f64
  %ok30 = arith.cmpf ole, %a29, %k22 : f64
  printf.print_format "primal buffer 0 element 2 = {} (expected -0.0723394): ok {}\n", %v27 : f64, %ok30 : i1
  %v31 = memref.load %buf1[%k10] : memref<?xf64>
  %d32 = arith.subf %v31, %k9 : f64
  %a33 = math.absf %d32 : f64
  %ok34 = arith.cmpf ole, %a33, %k22 : f64
  printf.print_format "primal buffer 0 element 3 = {} (expected 0.707778): ok {}\n", %v31 : f64, %ok34 : i1
  %v35 = memref.load %buf1[%k12] : memref<?xf64>
  %d36 = arith.subf %v35, %k11 : f64
  %a37 = math.absf %d36 : f64
  %ok38 = arith.cmpf ole, %a37, %k22 : f64
  printf.print_format "primal buffer 0 element 4 = {} (expected -0.542524): ok {}\n", %v35 : f64, %ok38 : i1
  %v39 = memref.load %buf1[%k14] : memref<?xf64>
  %d40 = arith.subf %v39, %k13 : f64
  %a41 = math.absf %d40 : f64
  %k43 = arith.constant 3.26211495265729409e-09 : f64
  %ok42 = arith.cmpf ole, %a41, %k43 : f64
  printf.print_format "primal buffer 0 element 5 = {} (expected -1.08737): ok {}\n", %v39 : f64, %ok42 : i1
  %v44 = memref.load %buf1[%k16] : memref<?xf64>
  %d45 = arith.subf %v44, %k15 : f64
  %a46 = math.absf %d45 : f64
  %k48 = arith.constant 3.35958169662341919e-09 : f64
  %ok47 = arith.cmpf ole, %a46, %k48 : f64
  printf.print_format "primal buffer 0 element 6 = {} (expected -1.11986): ok {}\n", %v44 : f64, %ok47 : i1
  %buf49 = memref.alloc(%k2) : memref<?xf64>
  memref.store %k3, %buf49[%k4] : memref<?xf64>
  memref.store %k5, %buf49[%k6] : memref<?xf64>
  memref.store %k7, %buf49[%k8] : memref<?xf64>
  memref.store %k9, %buf49[%k10] : memref<?xf64>
  memref.store %k11, %buf49[%k12] : memref<?xf64>
  memref.store %k13, %buf49[%k14] : memref<?xf64>
  memref.store %k15, %buf49[%k16] : memref<?xf64>
  %arg50 = memref.reinterpret_cast %buf49 to offset: [%k4], sizes: [%k2], strides: [%k6] : memref<?xf64> to memref<?xf64>
  ad.autodiff @f(%arg50) {activity = [const], ret_activity = []} : (memref<?xf64>) -> ()
  %v51 = memref.load %buf49[%k4] : memref<?xf64>
  %d52 = arith.subf %v51, %k3 : f64
  %a53 = math.absf %d52 : f64
  %ok54 = arith.cmpf ole, %a53, %k22 : f64
  printf.print_format "gradient's primal buffer 0 element 0 = {} (expected -0.731492): ok {}\n", %v51 : f64, %ok54 : i1
  %v55 = memref.load %buf49[%k6] : memref<?xf64>
  %d56 = arith.subf %v55, %k5 : f64
  %a57 = math.absf %d56 : f64
  %ok58 = arith.cmpf ole, %a57, %k22 : f64
  printf.print_format "gradient's primal buffer 0 element 1 = {} (expected -0.297901): ok {}\n", %v55 : f64, %ok58 : i1
  %v59 = memref.load %buf49[%k8] : memref<?xf64>
  %d60 = arith.subf %v59, %k7 : f64
  %a61 = math.absf %d60 : f64
  %ok62 = arith.cmpf ole, %a61, %k22 : f64
  printf.print_format "gradient's primal buffer 0 element 2 = {} (expected -0.0723394): ok {}\n", %v59 : f64, %ok62 : i1
  %v63 = memref.load %buf49[%k10] : memref<?xf64>
  %d64 = arith.subf %v63, %k9 : f64
  %a65 = math.absf %d64 : f64
  %ok66 = arith.cmpf ole, %a65, %k22 : f64
  printf.print_format "gradient's primal buffer 0 element 3 = {} (expected 0.707778): ok {}\n", %v63 : f64, %ok66 : i1
  %v67 = memref.load %buf49[%k12] : memref<?xf64>
  %d68 = arith.subf %v67, %k11 : f64
  %a69 = math.absf %d68 : f64
  %ok70 = arith.cmpf ole, %a69, %k22 : f64
  printf.print_format "gradient's primal buffer 0 element 4 = {} (expected -0.542524): ok {}\n", %v67 : f64, %ok70 : i1
  %v71 = memref.load %buf49[%k14] : memref<?xf64>
  %d72 = arith.subf %v71, %k13 : f64
  %a73 = math.absf %d72 : f64
  %ok74 = arith.cmpf ole, %a73, %k43 : f64
  printf.print_format "gradient's primal buffer 0 element 5 = {} (expected -1.08737): ok {}\n", %v71 : f64, %ok74 : i1
  %v75 = memref.load %buf49[%k16] : memref<?xf64>
  %d76 = arith.subf %v75, %k15 : f64
  %a77 = math.absf %d76 : f64
  %ok78 = arith.cmpf ole, %a77, %k48 : f64
  printf.print_format "gradient's primal buffer 0 element 6 = {} (expected -1.11986): ok {}\n", %v75 : f64, %ok78 : i1
  func.return
}

// CHECK: primal buffer 0 element 0 = {{.*}}: ok 1
// CHECK: primal buffer 0 element 1 = {{.*}}: ok 1
// CHECK: primal buffer 0 element 2 = {{.*}}: ok 1
// CHECK: primal buffer 0 element 3 = {{.*}}: ok 1
// CHECK: primal buffer 0 element 4 = {{.*}}: ok 1
// CHECK: primal buffer 0 element 5 = {{.*}}: ok 1
// CHECK: primal buffer 0 element 6 = {{.*}}: ok 1
// CHECK: gradient's primal buffer 0 element 0 = {{.*}}: ok 1
// CHECK: gradient's primal buffer 0 element 1 = {{.*}}: ok 1
// CHECK: gradient's primal buffer 0 element 2 = {{.*}}: ok 1
// CHECK: gradient's primal buffer 0 element 3 = {{.*}}: ok 1
// CHECK: gradient's primal buffer 0 element 4 = {{.*}}: ok 1
// CHECK: gradient's primal buffer 0 element 5 = {{.*}}: ok 1
// CHECK: gradient's primal buffer 0 element 6 = {{.*}}: ok 1
