// ad-opt --tape-limit reads bytes as the Python API's memory_limit does: an
// int >= 0 or a size like 1kB (1000 bytes: the same segments as 1000); a
// negative or malformed one is a usage error (exit 2) naming the flag. A
// negative limit used to switch checkpointing off with no error.
// RUN: ad-opt %s --reverse --tape-limit=1kB --print-cache-report 2>&1 >/dev/null | filecheck %s --check-prefix=KB
// RUN: ad-opt %s --reverse --tape-limit=1000 --print-cache-report 2>&1 >/dev/null | filecheck %s --check-prefix=KB
// RUN: not ad-opt %s --reverse --tape-limit=-5 2>&1 | filecheck %s --check-prefix=NEG
// RUN: not ad-opt %s --reverse --tape-limit=lots 2>&1 | filecheck %s --check-prefix=BAD
// A limit beyond 2**63 - 1 bytes is that limit (it failed in the IR builder: "out of range for i64").
// RUN: ad-opt %s --reverse --tape-limit=1e99 --print-cache-report 2>&1 >/dev/null | filecheck %s --check-prefix=HUGE
// HUGE: under a limit of 9223372036854775807 bytes: chosen when the gradient runs

// The report names every size it prints, and the values checkpointing
// adds by what they are (segment_length, revolve_steps, the segment's step
// parameter `step`; they were `<arith.select>` and `arg3`), and x + 0, x * 1
// are x.
// KB-NOT:   ?)
// KB-NOT:   <arith.
// KB-NOT:   <scf.
// KB:       tape      %v {{.*}} f64 x (steps - ((segments * segment_length) + revolve_steps)) * dim(u, 0)
// KB-NOT:   <arith.
// KB:       checkpoint @f_segment_0 at {{.*}}, which tapes 8*(ceildiv((hi - lo), step))*n bytes per call
// KB:       recompute factor: 2
// NEG:      ad-opt: error: argument --tape-limit: ad-opt: --tape-limit must be at least 0 bytes, got -5
// BAD:      ad-opt: error: argument --tape-limit: ad-opt: --tape-limit='lots' is not a size; write bytes as an int or a string like '32MB'

func.func @f(%u: memref<?xf64>, %steps: index) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f64
  %n = memref.dim %u, %c0 : memref<?xf64>
  %s = scf.for %t = %c0 to %steps step %c1 iter_args(%acc = %zero) -> (f64) {
    %inner = scf.for %i = %c0 to %n step %c1 iter_args(%a = %acc) -> (f64) {
      %v = memref.load %u[%i] : memref<?xf64>
      %w = math.sin %v : f64
      memref.store %w, %u[%i] : memref<?xf64>
      %b = arith.addf %a, %w : f64
      scf.yield %b : f64
    }
    scf.yield %inner : f64
  }
  func.return %s : f64
}

func.func @grad(%u: memref<?xf64>, %du: memref<?xf64>, %steps: index) {
  %seed = arith.constant 1.0 : f64
  ad.autodiff @f(%u, %du, %steps, %seed) {activity = [dup, const], ret_activity = [active]} : (memref<?xf64>, memref<?xf64>, index, f64) -> ()
  func.return
}
