// arith.select between memrefs: the selected memref's shadow is the same
// select between the shadows (db used to stay 0: the load's derivative was
// dropped). From Enzyme's test ReverseMode/arith.mlir (select_ptr).
// RUN: ad-opt %s --reverse | filecheck %s
// RUN: ad-run %s | filecheck %s --check-prefix=OUT

// CHECK-LABEL: func.func @select_ptr_grad_cdd_a(%c: i1, %a: memref<f64>, %da: memref<f64>, %b: memref<f64>, %db: memref<f64>, %seed: f64)
// CHECK:         %[[S:.*]] = arith.select %c, %da, %db : memref<f64>
// CHECK-NEXT:    %[[G:.*]] = memref.load %[[S]][] {ad.twin_of = {{[0-9]+}} : i64, ad.unchecked} : memref<f64>
// CHECK-NEXT:    %[[N:.*]] = arith.addf %[[G]], %seed : f64
// CHECK-NEXT:    memref.store %[[N]], %[[S]][] {ad.twin_of = {{[0-9]+}} : i64, ad.unchecked} : memref<f64>

// OUT: c = false: da = 0 db = 1
// OUT-NEXT: c = true: da = 1 db = 1

func.func @select_ptr(%c: i1, %a: memref<f64>, %b: memref<f64>) -> f64 {
  %ptr = arith.select %c, %a, %b : memref<f64>
  %val = memref.load %ptr[] : memref<f64>
  return %val : f64
}

func.func @main() {
  %f = arith.constant false
  %t = arith.constant true
  %z = arith.constant 0.0 : f64
  %v = arith.constant 2.0 : f64
  %one = arith.constant 1.0 : f64
  %a = memref.alloca() : memref<f64>
  %da = memref.alloca() : memref<f64>
  %b = memref.alloca() : memref<f64>
  %db = memref.alloca() : memref<f64>
  memref.store %v, %a[] : memref<f64>
  memref.store %v, %b[] : memref<f64>
  memref.store %z, %da[] : memref<f64>
  memref.store %z, %db[] : memref<f64>
  ad.autodiff @select_ptr(%f, %a, %da, %b, %db, %one) {activity = [const, dup, dup], ret_activity = [active]} : (i1, memref<f64>, memref<f64>, memref<f64>, memref<f64>, f64) -> ()
  %ra = memref.load %da[] : memref<f64>
  %rb = memref.load %db[] : memref<f64>
  printf.print_format "c = false: da = {} db = {}\n", %ra : f64, %rb : f64
  ad.autodiff @select_ptr(%t, %a, %da, %b, %db, %one) {activity = [const, dup, dup], ret_activity = [active]} : (i1, memref<f64>, memref<f64>, memref<f64>, memref<f64>, f64) -> ()
  %sa = memref.load %da[] : memref<f64>
  %sb = memref.load %db[] : memref<f64>
  printf.print_format "c = true: da = {} db = {}\n", %sa : f64, %sb : f64
  return
}
