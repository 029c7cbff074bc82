// mlir-opt's debug printing puts location aliases at the end of the file
// (`loc(#loc3)` before `#loc3 = loc(...)`): they are resolved when the
// module is parsed, and errors point at the aliased location. An alias that
// is never defined is an error at its use; so is a call of a function value
// that is not a func.constant, in a function being differentiated.
// RUN: not ad-opt %s --reverse 2>&1 | filecheck %s

// CHECK: original.py:7:3: error: 'func.call_indirect': calls a function value that is not a func.constant: {{.*}} call the function by name with func.call
func.func @f(%g: (f64) -> f64 loc(#loc1), %x: f64 loc(#loc1)) -> f64 {
  %y = func.call_indirect %g(%x) : (f64) -> f64 loc(#loc3)
  func.return %y : f64 loc(#loc2)
} loc(#loc2)
func.func @main(%x: f64, %h: (f64) -> f64) -> f64 {
  %one = arith.constant 1.0 : f64
  %d = ad.autodiff @f(%h, %x, %one) {activity = [const, active], ret_activity = [active]} : ((f64) -> f64, f64, f64) -> f64
  func.return %d : f64
}
#loc1 = loc("original.py":1:1)
#loc2 = loc("original.py":2:1)
#loc3 = loc(callsite(#loc4 at #loc2))
#loc4 = loc("original.py":7:3)
