// Enzyme-MLIR ReverseMode/arith.mlir: arith.select of floats, of memrefs,
// and arith.maxnumf.
// Hand derivations:
// - select(c, a, b): da = c ? dr : 0, db = c ? 0 : dr; at a = 2, b = 5,
//   dr = 1.5: c = true gives (1.5, 0), c = false (0, 1.5);
// - maxnumf(a, b): the derivative goes to the larger operand: at (2, 5),
//   dr = 1.5: (0, 1.5); at (7, 5): (1.5, 0);
// - select of memrefs then a load: the seed is added to the shadow of the
//   chosen memref: shadows start at 0.25 / 0.5, dr = 2, c = true gives
//   (2.25, 0.5), c = false (0.25, 2.5).
// RUN: ad-opt %s --reverse | filecheck %s --check-prefix=IR
// RUN: ad-run %s | filecheck %s

// IR-LABEL: func.func @select_grad_caa_a(%c: i1, %a: f64, %b: f64, %seed: f64) -> (f64, f64)
// IR-DAG:     %[[Z:.*]] = arith.constant 0.000000e+00 : f64
// IR-DAG:     %[[DA:.*]] = arith.select %c, %seed, %[[Z]] : f64
// IR-DAG:     %[[DB:.*]] = arith.select %c, %[[Z]], %seed : f64
// IR:         func.return %[[DA]], %[[DB]] : f64, f64
// The shadow of the selected memref is the same select of the shadows.
// IR-LABEL: func.func @select_ptr_grad_cdd_a(
// IR:         %[[DP:.*]] = arith.select %c, %da, %db : memref<f64>
// IR:         %[[OLD:.*]] = memref.load %[[DP]][]
// IR:         %[[NEW:.*]] = arith.addf %[[OLD]], %seed : f64
// IR:         memref.store %[[NEW]], %[[DP]][]

func.func @select(%c: i1, %a: f64, %b: f64) -> f64 {
  %res = arith.select %c, %a, %b : f64
  func.return %res : f64
}

func.func @maxnumf(%a: f64, %b: f64) -> f64 {
  %res = arith.maxnumf %a, %b : f64
  func.return %res : f64
}

func.func @select_ptr(%c: i1, %a: memref<f64>, %b: memref<f64>) -> f64 {
  %ptr = arith.select %c, %a, %b : memref<f64>
  %val = memref.load %ptr[] : memref<f64>
  func.return %val : f64
}

func.func @main() {
  %t = arith.constant true
  %f = arith.constant false
  %a = arith.constant 2.0 : f64
  %b = arith.constant 5.0 : f64
  %a2 = arith.constant 7.0 : f64
  %dr = arith.constant 1.5 : f64
  %s0, %s1 = ad.autodiff @select(%t, %a, %b, %dr) {activity = [const, active, active], ret_activity = [active]} : (i1, f64, f64, f64) -> (f64, f64)
  %s2, %s3 = ad.autodiff @select(%f, %a, %b, %dr) {activity = [const, active, active], ret_activity = [active]} : (i1, f64, f64, f64) -> (f64, f64)
  // CHECK: select 1.5 0 0 1.5
  printf.print_format "select {} {} {} {}\n", %s0 : f64, %s1 : f64, %s2 : f64, %s3 : f64
  %m0, %m1 = ad.autodiff @maxnumf(%a, %b, %dr) {activity = [active, active], ret_activity = [active]} : (f64, f64, f64) -> (f64, f64)
  %m2, %m3 = ad.autodiff @maxnumf(%a2, %b, %dr) {activity = [active, active], ret_activity = [active]} : (f64, f64, f64) -> (f64, f64)
  // CHECK-NEXT: maxnumf 0 1.5 1.5 0
  printf.print_format "maxnumf {} {} {} {}\n", %m0 : f64, %m1 : f64, %m2 : f64, %m3 : f64

  %pa = memref.alloc() : memref<f64>
  %pb = memref.alloc() : memref<f64>
  %da = memref.alloc() : memref<f64>
  %db = memref.alloc() : memref<f64>
  %q = arith.constant 0.25 : f64
  %h = arith.constant 0.5 : f64
  %two = arith.constant 2.0 : f64
  memref.store %a, %pa[] : memref<f64>
  memref.store %b, %pb[] : memref<f64>
  memref.store %q, %da[] : memref<f64>
  memref.store %h, %db[] : memref<f64>
  ad.autodiff @select_ptr(%t, %pa, %da, %pb, %db, %two) {activity = [const, dup, dup], ret_activity = [active]} : (i1, memref<f64>, memref<f64>, memref<f64>, memref<f64>, f64) -> ()
  %g0 = memref.load %da[] : memref<f64>
  %g1 = memref.load %db[] : memref<f64>
  memref.store %q, %da[] : memref<f64>
  memref.store %h, %db[] : memref<f64>
  ad.autodiff @select_ptr(%f, %pa, %da, %pb, %db, %two) {activity = [const, dup, dup], ret_activity = [active]} : (i1, memref<f64>, memref<f64>, memref<f64>, memref<f64>, f64) -> ()
  %g2 = memref.load %da[] : memref<f64>
  %g3 = memref.load %db[] : memref<f64>
  // CHECK-NEXT: select_ptr 2.25 0.5 0.25 2.5
  printf.print_format "select_ptr {} {} {} {}\n", %g0 : f64, %g1 : f64, %g2 : f64, %g3 : f64
  memref.dealloc %pa : memref<f64>
  memref.dealloc %pb : memref<f64>
  memref.dealloc %da : memref<f64>
  memref.dealloc %db : memref<f64>
  func.return
}
