// Enzyme-MLIR ReverseMode/scf_for_mincutouter.mlir: a loop carrying
// y <- (cos(y a) + a) (y + a) from y = a, asked for as with --enzyme-wrap
// (active -> active); a is read by every iteration, so its adjoint is
// carried beside y's. f64 here (Enzyme: f32) so that the 6 printed digits
// of ten chained iterations are stable. Enzyme tapes only y and recomputes
// y a, y + a, cos(y a) + a in the reverse sweep; adpasses recomputes the
// cheap y a and y + a but also tapes z = cos(y a) + a: its cost model
// prices recomputing a cos (16) above taping an f64 (8 bytes). The
// `min-memory` cache policy (recomputation free: the fewest taped bytes)
// gives Enzyme's placement: y alone taped, the cos recomputed.
// Hand derivation (forward tangents, t = dy/da): s = y a, ds = t a + y;
// q = y + a, dq = t + 1; z = cos s + a, dz = 1 - sin(s) ds;
// y' = z q, t' = dz q + z dq; from y = a, t = 1, ten steps: at a = 0.3:
// -4.31854 (central differences of the primal agree).
// RUN: ad-opt %s --reverse-wrap="fn=outer activities=active rets=active name=douter" | filecheck %s --check-prefix=IR
// RUN: ad-opt %s --reverse-wrap="fn=outer activities=active rets=active name=douter" | ad-run --entry run | filecheck %s
// RUN: ad-opt %s --cache-policy=min-memory --reverse-wrap="fn=outer activities=active rets=active name=douter" | filecheck %s --check-prefix=MEM
// RUN: ad-opt %s --cache-policy=min-memory --reverse-wrap="fn=outer activities=active rets=active name=douter" | ad-run --entry run | filecheck %s

// IR-LABEL: func.func @outer_grad_a_a(%arg0: f64, %seed: f64) -> f64
// IR-DAG:     %[[TY:tape_sum_iter]] = memref.alloca() : memref<10xf64>
// IR-DAG:     %[[TZ:tape_z_next]] = memref.alloca() : memref<10xf64>
// IR:         scf.for
// IR:         %[[R0:.*]], %[[R1:.*]] = scf.for {{.*}} iter_args(%{{.*}} = %seed, %{{.*}} = %{{.*}}) -> (f64, f64) {
// IR:           %[[Y:.*]] = memref.load %[[TY]]
// IR:           arith.mulf %[[Y]], %arg0 : f64
// IR:           arith.addf %[[Y]], %arg0 : f64
// IR-NOT:       math.cos
// IR:           math.sin
// The adjoint of the initial value (y = a) is added to the carried one.
// IR:         arith.addf %[[R1]], %[[R0]] : f64
// MEM-LABEL: func.func @outer_grad_a_a(%arg0: f64, %seed: f64) -> f64
// MEM:         %[[TY:tape_sum_iter]] = memref.alloca() : memref<10xf64>
// MEM-NOT:     memref.alloca() : memref<10xf64>
// MEM:         scf.for
// MEM:         scf.for
// MEM:           %[[Y:.*]] = memref.load %[[TY]]
// MEM:           %[[S:.*]] = arith.mulf %[[Y]], %arg0 : f64
// MEM:           math.cos %[[S]] : f64
// MEM:           math.sin %[[S]] : f64
// CHECK: douter -4.31854

func.func @outer(%arg0: f64) -> f64 {
  %lb = arith.constant 0 : index
  %ub = arith.constant 10 : index
  %step = arith.constant 1 : index
  %sum = scf.for %iv = %lb to %ub step %step iter_args(%sum_iter = %arg0) -> (f64) {
    %sum_next = arith.mulf %sum_iter, %arg0 : f64
    %sq_next = arith.addf %sum_iter, %arg0 : f64
    %cos_next = math.cos %sum_next : f64
    %z_next = arith.addf %cos_next, %arg0 : f64
    %y_next = arith.mulf %z_next, %sq_next : f64
    scf.yield %y_next : f64
  }
  func.return %sum : f64
}

func.func private @douter(f64, f64) -> f64

func.func @run() {
  %a = arith.constant 0.3 : f64
  %one = arith.constant 1.0 : f64
  %d = func.call @douter(%a, %one) : (f64, f64) -> f64
  printf.print_format "douter {}\n", %d : f64
  func.return
}
