// Enzyme-MLIR ReverseMode/scf_for_mutable_memory.mlir: a loop that reads
// buf[i] and writes the running sum to buf[0] every iteration, asked for as
// with --enzyme-wrap (dup -> active). What Enzyme checks: the adjoints of
// the loads and stores go into the argument's own shadow (not a copy, not
// lost). Enzyme tapes the shadow memref and the indices per iteration
// (its checkpointing attributes are left out: adpasses' counterpart is
// --tape-limit); adpasses addresses the shadow argument directly with the
// reversed index, and the sum is linear, so nothing is taped.
// Hand derivation: the result is S = sum of the original buf (buf[0] is
// read at i = 0 before it is overwritten), and buf ends as (S, buf[1..9]).
// The shadow on entry seeds the final contents: dbuf[0] = dr + dbuf_in[0],
// dbuf[j] = dr + dbuf_in[0] + dbuf_in[j] for j >= 1. At buf = (1, ..., 10),
// dbuf_in = 0.5, dr = 1: dbuf = (1.5, 2, ..., 2); S = 55 (buf[0] after).
// RUN: ad-opt %s --reverse-wrap="fn=reduce_sum activities=dup rets=active name=dreduce_sum" | filecheck %s --check-prefix=IR
// RUN: ad-opt %s --reverse-wrap="fn=reduce_sum activities=dup rets=active name=dreduce_sum" | ad-run --entry run | filecheck %s

// IR-LABEL: func.func @reduce_sum_grad_d_a(%buf: memref<10xf64>, %dbuf: memref<10xf64>, %seed: f64)
// IR-NOT:     memref.alloc(
// IR:         scf.for
// IR:         scf.for %[[J:.*]] = {{.*}} iter_args(%[[D:.*]] = %seed) -> (f64) {
// IR:           %[[I:.*]] = arith.subi %{{.*}}, %[[J]] : index
// IR:           %[[D0:.*]] = memref.load %dbuf[%c0]
// IR:           memref.store %{{.*}}, %dbuf[%c0]
// IR:           %[[S:.*]] = arith.addf %[[D]], %[[D0]] : f64
// IR:           %[[OLD:.*]] = memref.load %dbuf[%[[I]]]
// IR:           %[[NEW:.*]] = arith.addf %[[OLD]], %[[S]] : f64
// IR:           memref.store %[[NEW]], %dbuf[%[[I]]]
// CHECK: dbuf 1.5 2 2 2 2 2 2 2 2 2 buf0 55

func.func @reduce_sum(%buf: memref<10xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c10 = arith.constant 10 : index
  %init = arith.constant 0.0 : f64
  %sum = scf.for %i = %c0 to %c10 step %c1 iter_args(%acc = %init) -> (f64) {
    %val = memref.load %buf[%i] : memref<10xf64>
    %new_acc = arith.addf %acc, %val : f64
    memref.store %new_acc, %buf[%c0] : memref<10xf64>
    scf.yield %new_acc : f64
  }
  func.return %sum : f64
}

func.func private @dreduce_sum(memref<10xf64>, memref<10xf64>, f64)

func.func @run() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c10 = arith.constant 10 : index
  %one = arith.constant 1.0 : f64
  %half = arith.constant 0.5 : f64
  %buf = memref.alloc() : memref<10xf64>
  %dbuf = memref.alloc() : memref<10xf64>
  scf.for %i = %c0 to %c10 step %c1 {
    %i64 = arith.index_cast %i : index to i64
    %f = arith.sitofp %i64 : i64 to f64
    %v = arith.addf %f, %one : f64
    memref.store %v, %buf[%i] : memref<10xf64>
    memref.store %half, %dbuf[%i] : memref<10xf64>
  }
  func.call @dreduce_sum(%buf, %dbuf, %one) : (memref<10xf64>, memref<10xf64>, f64) -> ()
  printf.print_format "dbuf"
  scf.for %i = %c0 to %c10 step %c1 {
    %d = memref.load %dbuf[%i] : memref<10xf64>
    printf.print_format " {}", %d : f64
  }
  %b0 = memref.load %buf[%c0] : memref<10xf64>
  printf.print_format " buf0 {}\n", %b0 : f64
  memref.dealloc %buf : memref<10xf64>
  memref.dealloc %dbuf : memref<10xf64>
  func.return
}
