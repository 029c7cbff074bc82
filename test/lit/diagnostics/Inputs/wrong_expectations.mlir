// Expectations that do not hold (test/lit/diagnostics/expected_errors.mlir).
func.func @f(%g: (f64) -> f64, %x: f64) -> f64 {
  // expected-error @+2 {{no such message}}
  %z = arith.constant 0.0 : f64
  %y = func.call_indirect %g(%x) : (f64) -> f64
  func.return %y : f64
}
func.func @main(%x: f64, %h: (f64) -> f64) -> f64 {
  %one = arith.constant 1.0 : f64
  %d = ad.autodiff @f(%h, %x, %one) {activity = [const, active], ret_activity = [active]} : ((f64) -> f64, f64, f64) -> f64
  func.return %d : f64
}

// -----

// expected-error @+1 {{recursive call}}
func.func @r(%x: f64) -> f64 {
  %y = func.call @r(%x) : (f64) -> f64
  func.return %y : f64
}
func.func @main2(%x: f64) -> f64 {
  %one = arith.constant 1.0 : f64
  %d = ad.autodiff @r(%x, %one) {activity = [active], ret_activity = [active]} : (f64, f64) -> f64
  func.return %d : f64
}

// -----

// expected-error @below {{an error}}
func.func @fine(%x: f64) -> f64 {
  func.return %x : f64
}

// -----

func.func @g(%x: f64) -> f64 {
  func.return %x : f64 loc(#loc9)
}
