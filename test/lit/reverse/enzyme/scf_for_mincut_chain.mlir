// Enzyme-MLIR ReverseMode/scf_for_mincut_chain.mlir: a load a = x[i] feeds
// the chain c1 = 2 a, c2 = 3 c1, c3 = 5 c2, and only c3 is used nonlinearly
// (c3^2); x is overwritten after the loop, so a cannot be read again. Every
// cut of the chain costs one f32; the one to tape is c3 (nothing to
// recompute). adpasses' min-cut breaks the tie the same way: c3 is taped,
// and the reverse sweep multiplies by the constants without rebuilding the
// chain.
// Hand derivation: r = sum_i (30 x[i])^2, then x[0] <- 0. The store
// consumes dx[0]'s seed first: dx[0] = 1800 x[0] dr, dx[i] = dx_in[i] +
// 1800 x[i] dr: at x = (1, 2, 3), ub = 3, dx_in = 0.5, dr = 1:
// dx = (1800, 3600.5, 5400.5); r = 12600, x[0] after = 0.
// RUN: ad-opt %s --reverse | filecheck %s --check-prefix=IR
// RUN: ad-run %s | filecheck %s

// IR-LABEL: func.func @chain_grad_dc_a_p(%x: memref<?xf32>, %dx: memref<?xf32>, %ub: index, %seed: f32) -> f32
// IR:         %[[T:.*]] = memref.alloc(%{{.*}}) {{.*}} : memref<?xf32>
// IR-NOT:     memref.alloc(
// IR:         scf.for
// IR:           %[[A:.*]] = memref.load %x[%iv]
// IR:           %[[C1:.*]] = arith.mulf %[[A]], %k1
// IR:           %[[C2:.*]] = arith.mulf %[[C1]], %k2
// IR:           %[[C3:.*]] = arith.mulf %[[C2]], %k3
// IR:           memref.store %[[C3]], %[[T]]
// IR-NOT:       memref.store %{{.*}}, %[[T]]
// IR:         memref.store %{{.*}}, %x[%lb]
// IR:         scf.for
// IR:           %[[LC3:.*]] = memref.load %[[T]]
// IR-NOT:       memref.load %[[T]]
// IR:           %[[G0:.*]] = arith.mulf %{{.*}}, %[[LC3]] : f32
// IR-NEXT:      %[[G1:.*]] = arith.addf %[[G0]], %[[G0]] : f32
// IR-NEXT:      %[[G2:.*]] = arith.mulf %[[G1]], %k3 : f32
// IR-NEXT:      %[[G3:.*]] = arith.mulf %[[G2]], %k2 : f32
// IR-NEXT:      arith.mulf %[[G3]], %k1 : f32
// IR:         memref.dealloc %[[T]]
// CHECK: r 12600 dx 1800 3600.5 5400.5 x0 0

func.func private @chain(%x: memref<?xf32>, %ub: index) -> f32 {
  %lb = arith.constant 0 : index
  %step = arith.constant 1 : index
  %k1 = arith.constant 2.0 : f32
  %k2 = arith.constant 3.0 : f32
  %k3 = arith.constant 5.0 : f32
  %sum_0 = arith.constant 0.0 : f32
  %sum = scf.for %iv = %lb to %ub step %step iter_args(%acc = %sum_0) -> (f32) {
    %a = memref.load %x[%iv] : memref<?xf32>
    %c1 = arith.mulf %a, %k1 : f32
    %c2 = arith.mulf %c1, %k2 : f32
    %c3 = arith.mulf %c2, %k3 : f32
    %s = arith.mulf %c3, %c3 : f32
    %acc_next = arith.addf %acc, %s : f32
    scf.yield %acc_next : f32
  }
  memref.store %sum_0, %x[%lb] : memref<?xf32>
  func.return %sum : f32
}

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %one = arith.constant 1.0 : f32
  %half = arith.constant 0.5 : f32
  %x = memref.alloc(%c3) : memref<?xf32>
  %dx = memref.alloc(%c3) : memref<?xf32>
  scf.for %i = %c0 to %c3 step %c1 {
    %i64 = arith.index_cast %i : index to i64
    %f = arith.sitofp %i64 : i64 to f32
    %v = arith.addf %f, %one : f32
    memref.store %v, %x[%i] : memref<?xf32>
    memref.store %half, %dx[%i] : memref<?xf32>
  }
  %r = ad.autodiff @chain(%x, %dx, %c3, %one) {activity = [dup, const], ret_activity = [active], with_primal} : (memref<?xf32>, memref<?xf32>, index, f32) -> f32
  %d0 = memref.load %dx[%c0] : memref<?xf32>
  %d1 = memref.load %dx[%c1] : memref<?xf32>
  %d2 = memref.load %dx[%c2] : memref<?xf32>
  %x0 = memref.load %x[%c0] : memref<?xf32>
  printf.print_format "r {} dx {} {} {} x0 {}\n", %r : f32, %d0 : f32, %d1 : f32, %d2 : f32, %x0 : f32
  memref.dealloc %x : memref<?xf32>
  memref.dealloc %dx : memref<?xf32>
  func.return
}
