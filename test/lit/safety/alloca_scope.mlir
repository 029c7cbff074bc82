// memref.alloca_scope: the reverse is an alloca_scope too, so the zeroed
// shadow of an alloca inside the forward scope lives (and is released) in
// the reverse scope; the lowering saves and restores the stack around
// scopes with dynamic-size allocas (it used to reject the op).
// --no-scalar-replace keeps %buf in memory (by default ad-scalar-replace
// makes its two elements values: nothing taped, no shadow; ad-run shows the
// same derivative).
// RUN: ad-opt %s --reverse --no-scalar-replace | filecheck %s
// RUN: ad-run %s | filecheck %s --check-prefix=OUT
// RUN: ad-opt %s --reverse | filecheck %s --check-prefix=SROA
// SROA-LABEL: func.func @f_grad_a_a(%x: f64, %seed: f64) -> f64
// SROA-NOT:     = memref.alloca
// SROA:         func.return

// %a and %b are read from %buf, which the end of the scope frees: taped.
// CHECK-LABEL: func.func @f_grad_a_a(%x: f64, %seed: f64) -> f64
// CHECK:         %r = "memref.alloca_scope"() ({
// CHECK:           memref.store %a, %tape_a
// CHECK:           memref.store %b, %tape_b
// CHECK:         %[[R:.*]] = "memref.alloca_scope"() ({
// CHECK:           memref.load %tape_b
// CHECK:           memref.load %tape_a
// CHECK:           %dbuf = memref.alloca(%c2) : memref<?xf64>
// CHECK:           "memref.alloca_scope.return"(%[[D:.*]]) : (f64) -> ()
// CHECK-NEXT:    }) : () -> f64
// CHECK-NEXT:    func.return %[[R]] : f64

// RUN: ad-opt %s --reverse --no-scalar-replace --emit=llvm-ir | filecheck %s --check-prefix=LLVM
// LLVM:      define {{.*}} @"u.f_grad_a_a"
// LLVM:        %[[SP:.*]] = call ptr @"llvm.stacksave.p0"()
// LLVM:        call void @"llvm.stackrestore.p0"(ptr %[[SP]])

// f = (2x) * x^2 = 2 x^3: at x = 3, f = 54 and df = 6 x^2 = 54.
// OUT: f = 54 df = 54

func.func @f(%x: f64) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %r = "memref.alloca_scope"() ({
    %buf = memref.alloca(%c2) : memref<?xf64>
    %y = arith.mulf %x, %x : f64
    %t = arith.addf %x, %x : f64
    memref.store %y, %buf[%c0] : memref<?xf64>
    memref.store %t, %buf[%c1] : memref<?xf64>
    %a = memref.load %buf[%c0] : memref<?xf64>
    %b = memref.load %buf[%c1] : memref<?xf64>
    %p = arith.mulf %a, %b : f64
    "memref.alloca_scope.return"(%p) : (f64) -> ()
  }) : () -> f64
  func.return %r : f64
}

func.func @main() {
  %a = arith.constant 3.0 : f64
  %s = arith.constant 1.0 : f64
  %v = func.call @f(%a) : (f64) -> f64
  %d = ad.autodiff @f(%a, %s) {activity = [active], ret_activity = [active]} : (f64, f64) -> f64
  printf.print_format "f = {} df = {}\n", %v : f64, %d : f64
  func.return
}
