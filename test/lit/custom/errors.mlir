// RUN: ad-opt %s --reverse --split-input-file --verify-diagnostics
// Custom rules whose types do not follow the conventions
// (adpasses/core/custom_rules.py) are errors at the function that names them.

// expected-error @+1 {{the reverse rule @sq_bwd of @sq has type (f64) -> (f64), but the convention asks (f64, f64) -> (f64)}}
func.func private @sq(%x: f64) -> f64 attributes {ad.custom_rule = {augmented_primal = @sq_fwd, reverse = @sq_bwd}}
func.func private @sq_fwd(%x: f64) -> (f64, f64) {
  func.return %x, %x : f64, f64
}
func.func private @sq_bwd(%g: f64) -> f64 {
  func.return %g : f64
}
func.func @f(%x: f64) -> f64 {
  %y = func.call @sq(%x) : (f64) -> f64
  func.return %y : f64
}
func.func @main(%x: f64) -> f64 {
  %one = arith.constant 1.0 : f64
  %d = ad.autodiff @f(%x, %one) {activity = [active], ret_activity = [active]} : (f64, f64) -> f64
  func.return %d : f64
}

// -----

// expected-error @+1 {{'ad.custom_rule' of @sq needs both 'augmented_primal' and 'reverse'}}
func.func private @sq(%x: f64) -> f64 attributes {ad.custom_rule = {reverse = @sq}}
func.func @f(%x: f64) -> f64 {
  %y = func.call @sq(%x) : (f64) -> f64
  func.return %y : f64
}
func.func @main(%x: f64) -> f64 {
  %one = arith.constant 1.0 : f64
  %d = ad.autodiff @f(%x, %one) {activity = [active], ret_activity = [active]} : (f64, f64) -> f64
  func.return %d : f64
}

// -----

// expected-error @+1 {{names '@nowhere' as a custom rule, but the module has no such function}}
func.func private @sq(%x: f64) -> f64 attributes {ad.custom_rule = {forward = @nowhere}}
func.func @f(%x: f64) -> f64 {
  %y = func.call @sq(%x) : (f64) -> f64
  func.return %y : f64
}
func.func @main(%x: f64) -> f64 {
  %one = arith.constant 1.0 : f64
  %d = ad.autodiff @f(%x, %one) {activity = [active], ret_activity = [active]} : (f64, f64) -> f64
  func.return %d : f64
}
