// affine.load/store index lists as upstream reads them: a bare SSA value is
// a dimension, `symbol(%v)` a symbol (xDSL 0.74 made every value a symbol,
// and upstream rejects an induction variable as a symbol). A map with both
// dimensions and symbols, as the generic form may give it, prints with each
// operand in its place (xDSL printed symbol k as operand k: `s0 - d0` came
// out as `%i - %i`).
// RUN: ad-opt %s | filecheck %s
// RUN: ad-opt %s --print-op-generic | filecheck %s --check-prefix=GEN
// RUN: ad-run %s | filecheck %s --check-prefix=OUT

// CHECK: %v = affine.load %x[%i + 1, %n + %i * -1] : memref<?x?xf64>
// CHECK: %w = affine.load %x[%i + 1, %n + %i * -1] : memref<?x?xf64>
// GEN: "affine.load"(%x, %i, %n) <{map = affine_map<(d0, d1) -> ((d0 + 1), (d1 + (d0 * -1)))>}>
// GEN: "affine.load"(%x, %i, %n) <{map = affine_map<(d0)[s0] -> ((d0 + 1), (s0 + (d0 * -1)))>}>
// x[i][j] = 10 i + j, n = 3: sum over i < 2 of x[i+1][3-i] twice = 2 * (13 + 22) = 70
// OUT: 70

func.func @f(%x: memref<?x?xf64>, %n: index) -> f64 {
  %z = arith.constant 0.0 : f64
  %r = affine.for %i = 0 to 2 iter_args(%acc = %z) -> f64 {
    %v = affine.load %x[%i + 1, symbol(%n) - %i] : memref<?x?xf64>
    %w = "affine.load"(%x, %i, %n) <{map = affine_map<(d0)[s0] -> (d0 + 1, s0 - d0)>}> : (memref<?x?xf64>, index, index) -> f64
    %s = arith.addf %v, %w : f64
    %t = arith.addf %acc, %s : f64
    affine.yield %t : f64
  }
  func.return %r : f64
}

func.func @main() {
  %c4 = arith.constant 4 : index
  %c3 = arith.constant 3 : index
  %x = memref.alloc(%c4, %c4) : memref<?x?xf64>
  affine.for %i = 0 to 4 {
    affine.for %j = 0 to 4 {
      %k = affine.apply affine_map<(d0, d1) -> (d0 * 10 + d1)>(%i, %j)
      %ki = arith.index_cast %k : index to i64
      %kf = arith.sitofp %ki : i64 to f64
      affine.store %kf, %x[%i, %j] : memref<?x?xf64>
    }
  }
  %r = func.call @f(%x, %c3) : (memref<?x?xf64>, index) -> f64
  printf.print_format "{}\n", %r : f64
  memref.dealloc %x : memref<?x?xf64>
  func.return
}
