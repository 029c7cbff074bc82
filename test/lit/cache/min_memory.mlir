// The `min-memory` cache policy: the same min-cut as `minimal` with every
// recompute and reload free, so it tapes the fewest bytes and recomputes
// whatever is legal, however costly (Enzyme-MLIR's placement; its
// scf_for_mincutouter test: test/lit/reverse/enzyme/scf_for_mincutouter.mlir).
// y <- (cos(y a) + a)(y + a): `minimal` tapes the carried y and z = cos(y a) + a
// (recomputing the cos costs 16, above an f64 of tape); `min-memory` tapes
// y alone and recomputes the cos. Both give the same number (forward
// tangents by hand, as in the Enzyme file's header: -4.31854 at a = 0.3).
// RUN: ad-opt %s --reverse --print-cache-report 2>&1 >/dev/null | filecheck %s --check-prefix=MIN
// RUN: ad-opt %s --reverse --cache-policy=min-memory --print-cache-report 2>&1 >/dev/null | filecheck %s --check-prefix=MEM
// RUN: ad-opt %s -p 'ad-reverse{cache-policy=min-memory report=text}' 2>&1 >/dev/null | filecheck %s --check-prefix=MEM
// RUN: ad-run %s | filecheck %s
// RUN: ad-run %s --cache-policy=min-memory | filecheck %s
// RUN: not ad-opt %s -p 'ad-reverse{cache-policy=fewest}' 2>&1 | filecheck %s --check-prefix=ERR

// MIN-LABEL: cache report for @outer_grad_a_a (gradient of @outer, policy minimal)
// MIN:         tape      %y
// MIN:         recompute %s
// MIN:         tape      %z {{.*}}cost model:
// MIN:         taped bytes: 8*10 + 8*10
// MEM-LABEL: cache report for @outer_grad_a_a (gradient of @outer, policy min-memory)
// MEM:         tape      %y
// MEM:         recompute %c {{.*}}math.cos
// MEM:         recompute %z
// MEM:         taped bytes: 8*10{{$}}
// CHECK: douter -4.31854
// ERR: unknown cache-policy 'fewest' (minimal, min-memory, tape-all)

func.func @outer(%a: f64) -> f64 {
  %lb = arith.constant 0 : index
  %ub = arith.constant 10 : index
  %step = arith.constant 1 : index
  %r = scf.for %iv = %lb to %ub step %step iter_args(%y = %a) -> (f64) {
    %s = arith.mulf %y, %a : f64
    %q = arith.addf %y, %a : f64
    %c = math.cos %s : f64
    %z = arith.addf %c, %a : f64
    %next = arith.mulf %z, %q : f64
    scf.yield %next : f64
  }
  func.return %r : f64
}

func.func @main() {
  %x = arith.constant 0.3 : f64
  %one = arith.constant 1.0 : f64
  %d = ad.autodiff @outer(%x, %one) {activity = [active], ret_activity = [active]} : (f64, f64) -> f64
  printf.print_format "douter {}\n", %d : f64
  func.return
}
