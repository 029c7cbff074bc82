// RUN: ad-opt %s -p ad-parallelize | filecheck %s
// RUN: env ADPASSES_NUM_THREADS=3 ADPASSES_PARALLEL_MIN_WORK=1 ad-run %s | filecheck %s --check-prefix=OUT
// A loop proven independent only if its strided argument has distinct
// elements (its strides are dynamic: a stride of 0 would make iterations
// write one element) is versioned: the sizes and strides read when it
// starts (memref.extract_strided_metadata), the parallel loop when each
// dimension of size > 1 has a positive stride beyond the span of the
// dimensions inside it (row-major or column-major nesting), else the
// serial loop, unmarked.

// CHECK-LABEL: func.func @double_into(
// CHECK:         %{{.*}}, %{{.*}}, %[[SIZE:[0-9]+]], %[[STRIDE:[0-9]+]] = memref.extract_strided_metadata %y
// CHECK:         %[[TRIVIAL:.*]] = arith.cmpi ule, %[[SIZE]], %{{.*}} : index
// CHECK:         %[[POSITIVE:.*]] = arith.cmpi sge, %[[STRIDE]], %{{.*}} : index
// CHECK-NOT:     arith.maxsi
// CHECK:         scf.if %{{.*}} {
// CHECK-NEXT:      "ad.parallel_for"(%c0, %n, %c1, %x, %y) <{callee = @double_into.par0
// CHECK-NEXT:    } else {
// CHECK-NEXT:      scf.for %i = %c0 to %n step %c1 {
// CHECK-NOT:       ad.parallel
// CHECK:         func.func private @double_into.par0(%lo: index, %hi: index, %step: index, %x: memref<?xf64> {ad.noalias}, %y: memref<?xf64, strided<[?], offset: ?>> {ad.noalias})
func.func @double_into(%x: memref<?xf64> {ad.noalias}, %y: memref<?xf64, strided<[?], offset: ?>> {ad.noalias}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %two = arith.constant 2.0 : f64
  %n = memref.dim %x, %c0 : memref<?xf64>
  scf.for %i = %c0 to %n step %c1 {
    %a = memref.load %x[%i] : memref<?xf64>
    %b = arith.mulf %two, %a : f64
    memref.store %b, %y[%i] : memref<?xf64, strided<[?], offset: ?>>
  } {ad.parallel = "auto"}
  func.return
}

// A loop that is dependent whatever the strides stays one serial loop.
// CHECK-LABEL: func.func @shifted_into(
// CHECK-NOT:     extract_strided_metadata
// CHECK-NOT:     ad.parallel
// CHECK:         func.return
func.func @shifted_into(%y: memref<?xf64, strided<[?], offset: ?>> {ad.noalias}, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c1 to %n step %c1 {
    %im = arith.subi %i, %c1 : index
    %a = memref.load %y[%im] : memref<?xf64, strided<[?], offset: ?>>
    memref.store %a, %y[%i] : memref<?xf64, strided<[?], offset: ?>>
  } {ad.parallel = "auto"}
  func.return
}

// Run (3 threads, one chunk each): x = 1, 2, 3 doubled into the even
// elements of a 6-element buffer (a view of stride 2: parallel), then 4,
// 5, 6 doubled into its last element three times (a view of stride 0:
// serial, the last iteration's value stays).
// OUT: even = 2 0 4 0 6 0
// OUT-NEXT: cell = 12
func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %c6 = arith.constant 6 : index
  %one = arith.constant 1.0 : f64
  %zero = arith.constant 0.0 : f64
  %x = memref.alloc(%c3) : memref<?xf64>
  %buf = memref.alloc(%c6) : memref<?xf64>
  scf.for %i = %c0 to %c6 step %c1 {
    memref.store %zero, %buf[%i] : memref<?xf64>
  }
  scf.for %i = %c0 to %c3 step %c1 {
    %ii = arith.index_cast %i : index to i64
    %f = arith.sitofp %ii : i64 to f64
    %f1 = arith.addf %f, %one : f64
    memref.store %f1, %x[%i] : memref<?xf64>
  }
  %even = memref.reinterpret_cast %buf to offset: [%c0], sizes: [%c3], strides: [%c2] : memref<?xf64> to memref<?xf64, strided<[?], offset: ?>>
  func.call @double_into(%x, %even) : (memref<?xf64>, memref<?xf64, strided<[?], offset: ?>>) -> ()
  %b0 = memref.load %buf[%c0] : memref<?xf64>
  %b1 = memref.load %buf[%c1] : memref<?xf64>
  %b2 = memref.load %buf[%c2] : memref<?xf64>
  %b3 = memref.load %buf[%c3] : memref<?xf64>
  %b4 = memref.load %buf[%c4] : memref<?xf64>
  %b5 = memref.load %buf[%c5] : memref<?xf64>
  printf.print_format "even = {} {} {} {} {} {}\n", %b0 : f64, %b1 : f64, %b2 : f64, %b3 : f64, %b4 : f64, %b5 : f64
  scf.for %i = %c0 to %c3 step %c1 {
    %v = memref.load %x[%i] : memref<?xf64>
    %w = arith.addf %v, %one : f64
    %w2 = arith.addf %w, %one : f64
    %w3 = arith.addf %w2, %one : f64
    memref.store %w3, %x[%i] : memref<?xf64>
  }
  %cell = memref.reinterpret_cast %buf to offset: [%c5], sizes: [%c3], strides: [%c0] : memref<?xf64> to memref<?xf64, strided<[?], offset: ?>>
  func.call @double_into(%x, %cell) : (memref<?xf64>, memref<?xf64, strided<[?], offset: ?>>) -> ()
  %last = memref.load %buf[%c5] : memref<?xf64>
  printf.print_format "cell = {}\n", %last : f64
  memref.dealloc %x : memref<?xf64>
  memref.dealloc %buf : memref<?xf64>
  func.return
}
