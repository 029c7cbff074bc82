// ad-inline-calls inlines, transitively, every call to a defined function
// into the functions the reverse pipeline works on (marked ad.gradient_of),
// never into the user's functions; recursion is an error at the call,
// named by the primal the copy stands for.
// RUN: ad-opt %s -p ad-inline-calls | filecheck %s
// RUN: not ad-opt %S/Inputs/recursive_copy.mlir -p ad-inline-calls 2>&1 | filecheck %s --check-prefix=REC

// CHECK-LABEL: func.func @f(%x: f64) -> f64 {
// CHECK-NEXT:    %y = func.call @outer(%x) : (f64) -> f64
// CHECK-LABEL: func.func @f_grad_a_a(%x: f64) -> f64 attributes {ad.gradient_of =
// CHECK-NEXT:    %w = arith.mulf %x, %x : f64
// CHECK-NEXT:    %u = math.sin %w : f64
// CHECK-NEXT:    %c = func.call @ext(%u) : (f64) -> f64
// CHECK-NEXT:    func.return %c : f64
// CHECK-LABEL: func.func @outer(%a: f64) -> f64 {
// CHECK-NEXT:    %b = func.call @inner(%a) : (f64) -> f64

// REC: recursive_copy.mlir:11:3: error: 'func.call': recursive call (f -> g -> f) cannot be inlined for differentiation: mark it {ad.checkpoint} (its reverse calls the callee's gradient, one call frame at a time) or rewrite the recursion as a loop
func.func @f(%x: f64) -> f64 {
  %y = func.call @outer(%x) : (f64) -> f64
  func.return %y : f64
}
func.func @f_grad_a_a(%x: f64) -> f64 attributes {ad.gradient_of = {primal = @f, activity = ["active"], ret_activity = ["active"]}} {
  %y = func.call @outer(%x) : (f64) -> f64
  func.return %y : f64
}
func.func @outer(%a: f64) -> f64 {
  %b = func.call @inner(%a) : (f64) -> f64
  %c = func.call @ext(%b) : (f64) -> f64
  func.return %c : f64
}
func.func @inner(%v: f64) -> f64 {
  %w = arith.mulf %v, %v : f64
  %u = math.sin %w : f64
  func.return %u : f64
}
func.func private @ext(f64) -> f64
