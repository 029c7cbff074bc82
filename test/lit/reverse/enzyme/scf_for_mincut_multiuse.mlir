// Enzyme-MLIR ReverseMode/scf_for_mincut_multiuse.mlir: a load a = x[i]
// used by four multiplications o1..o4, summed into p = o1 + o2 and
// q = o3 + o4, each squared; x is overwritten after the loop, so a cannot
// be read again. The reverse sweep needs p and q; the cheapest cache is a
// alone (one f32 however many ops use it), with o1..o4, p, q recomputed.
// adpasses' min-cut splits each value into an in and an out node joined by
// its tape cost, so a costs one f32 too: it is the only value taped.
// Hand derivation: p = 5 a, q = 12 a, s = p^2 + q^2 = 169 a^2, r = sum s;
// then x[0] <- 0, which consumes dx[0]'s seed first: dx[0] = 338 x[0] dr,
// dx[i] = dx_in[i] + 338 x[i] dr: at x = (1, 2, 3), ub = 3, dx_in = 0.5,
// dr = 1: dx = (338, 676.5, 1014.5).
// RUN: ad-opt %s --reverse | filecheck %s --check-prefix=IR
// RUN: ad-run %s | filecheck %s

// IR-LABEL: func.func @reduce_grad_dc_a(%x: memref<?xf32>, %dx: memref<?xf32>, %ub: index, %seed: f32)
// IR:         %[[T:.*]] = memref.alloc(%{{.*}}) {{.*}} : memref<?xf32>
// IR-NOT:     memref.alloc(
// IR:         scf.for
// IR:           %[[A:.*]] = memref.load %x[%iv]
// IR:           memref.store %[[A]], %[[T]]
// IR-NOT:       memref.store %{{.*}}, %[[T]]
// IR:         memref.store %{{.*}}, %x[%lb]
// IR:         scf.for
// IR:           %[[LA:.*]] = memref.load %[[T]]
// IR-NOT:       memref.load %[[T]]
// IR-DAG:       arith.mulf %[[LA]], %c1 : f32
// IR-DAG:       arith.mulf %[[LA]], %c2 : f32
// IR-DAG:       arith.mulf %[[LA]], %c3 : f32
// IR-DAG:       arith.mulf %[[LA]], %c4 : f32
// IR:         memref.dealloc %[[T]]
// CHECK: dx 338 676.5 1014.5

func.func private @reduce(%x: memref<?xf32>, %ub: index) -> f32 {
  %lb = arith.constant 0 : index
  %step = arith.constant 1 : index
  %c1 = arith.constant 2.0 : f32
  %c2 = arith.constant 3.0 : f32
  %c3 = arith.constant 5.0 : f32
  %c4 = arith.constant 7.0 : f32
  %sum_0 = arith.constant 0.0 : f32
  %sum = scf.for %iv = %lb to %ub step %step iter_args(%acc = %sum_0) -> (f32) {
    %a = memref.load %x[%iv] : memref<?xf32>
    %o1 = arith.mulf %a, %c1 : f32
    %o2 = arith.mulf %a, %c2 : f32
    %o3 = arith.mulf %a, %c3 : f32
    %o4 = arith.mulf %a, %c4 : f32
    %p = arith.addf %o1, %o2 : f32
    %q = arith.addf %o3, %o4 : f32
    %p2 = arith.mulf %p, %p : f32
    %q2 = arith.mulf %q, %q : f32
    %s = arith.addf %p2, %q2 : f32
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
  ad.autodiff @reduce(%x, %dx, %c3, %one) {activity = [dup, const], ret_activity = [active]} : (memref<?xf32>, memref<?xf32>, index, f32) -> ()
  %d0 = memref.load %dx[%c0] : memref<?xf32>
  %d1 = memref.load %dx[%c1] : memref<?xf32>
  %d2 = memref.load %dx[%c2] : memref<?xf32>
  printf.print_format "dx {} {} {}\n", %d0 : f32, %d1 : f32, %d2 : f32
  memref.dealloc %x : memref<?xf32>
  memref.dealloc %dx : memref<?xf32>
  func.return
}
