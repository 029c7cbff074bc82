// Split mode's errors, as MLIR projects write negative tests: a tape that
// grows (an scf.while loop's values) cannot outlive the forward function's
// frame; a tape passed anywhere but to its reverse half (here through
// scf.if) or to the reverse half of another request; with_primal on the
// reverse half of a split op; a wrapper asked for in forward mode.
// RUN: ad-opt %s --reverse --split-input-file --verify-diagnostics
// RUN: not ad-opt %s --split-input-file --forward-wrap="fn=f split" 2>&1 | filecheck %s --check-prefix=WRAP
// WRAP: error: ad-wrap{fn=f}: split is a reverse-mode option without with-primal

func.func @f(%x: f64) -> f64 {
  %lim = arith.constant 10.0 : f64
  // expected-error @+1 {{split mode cannot hand this growable tape}}
  %r = scf.while (%w = %x) : (f64) -> f64 {
    %go = arith.cmpf olt, %w, %lim : f64
    scf.condition(%go) %w : f64
  } do {
  ^bb0(%w2: f64):
    %e = math.exp %w2 : f64
    %n = arith.addf %e, %w2 : f64
    scf.yield %n : f64
  }
  func.return %r : f64
}
func.func @g(%x: f64) -> f64 {
  %one = arith.constant 1.0 : f64
  %y, %t = ad.autodiff @f(%x) {activity = [active], ret_activity = [active], split = forward} : (f64) -> (f64, !ad.split_tape)
  %dx = ad.autodiff @f(%one, %t) {activity = [active], ret_activity = [active], split = reverse} : (f64, !ad.split_tape) -> f64
  func.return %dx : f64
}

// -----

func.func @f(%x: f64) -> f64 {
  %r = math.sin %x : f64
  func.return %r : f64
}
func.func @g(%x: f64, %c: i1) -> f64 {
  %one = arith.constant 1.0 : f64
  %y, %t = ad.autodiff @f(%x) {activity = [active], ret_activity = [active], split = forward} : (f64) -> (f64, !ad.split_tape)
  // expected-error @+2 {{may only be passed to a `split = reverse` ad.autodiff}}
  %t2 = scf.if %c -> (!ad.split_tape) {
    scf.yield %t : !ad.split_tape
  } else {
    scf.yield %t : !ad.split_tape
  }
  %dx = ad.autodiff @f(%one, %t2) {activity = [active], ret_activity = [active], split = reverse} : (f64, !ad.split_tape) -> f64
  func.return %dx : f64
}

// -----

func.func @f(%x: f64, %y: f64) -> f64 {
  %r = arith.mulf %x, %y : f64
  func.return %r : f64
}
func.func @g(%x: f64, %y: f64) -> f64 {
  %one = arith.constant 1.0 : f64
  %p, %t = ad.autodiff @f(%x, %y) {activity = [active, const], ret_activity = [active], split = forward} : (f64, f64) -> (f64, !ad.split_tape)
  // expected-error @+1 {{reads the tape of a split ad.autodiff of @f with activities [active, const] -> [active]}}
  %dx, %dy = ad.autodiff @f(%one, %t) {activity = [active, active], ret_activity = [active], split = reverse} : (f64, !ad.split_tape) -> (f64, f64)
  func.return %dx : f64
}

// -----

func.func @f(%x: f64) -> f64 {
  func.return %x : f64
}
func.func @g(%x: f64) -> f64 {
  %one = arith.constant 1.0 : f64
  %y, %t = ad.autodiff @f(%x) {activity = [active], ret_activity = [active], split = forward, with_primal} : (f64) -> (f64, !ad.split_tape)
  // expected-error @+1 {{with_primal does not apply to the reverse half of a split ad.autodiff}}
  %dx = ad.autodiff @f(%one, %t) {activity = [active], ret_activity = [active], split = reverse, with_primal} : (f64, !ad.split_tape) -> f64
  func.return %y : f64
}
