// RUN: ad-opt %s --emit=llvm-ir | filecheck %s
// math.fpowi with a constant exponent becomes a chain of squarings (x**5 =
// x * (x^2)^2: three fmul, no call); a negative one divides 1 by it; a
// dynamic exponent calls an inlinable binary-exponentiation helper. Never
// libm pow, which costs ~40x a multiplication.

// CHECK-LABEL: define double @"u.cube"(double %"x")
// CHECK-NOT: call
// CHECK: fmul double %"x", %"x"
// CHECK: fmul double %"x",
// CHECK-NOT: call
// CHECK: ret double
func.func @cube(%x: f64) -> f64 {
  %c3 = arith.constant 3 : i32
  %r = math.fpowi %x, %c3 : f64, i32
  func.return %r : f64
}

// CHECK-LABEL: define double @"u.inverse_square"(double %"x")
// CHECK: %[[SQ:.*]] = fmul double %"x", %"x"
// CHECK: fdiv double 0x3ff0000000000000, %[[SQ]]
func.func @inverse_square(%x: f64) -> f64 {
  %c = arith.constant -2 : i32
  %r = math.fpowi %x, %c : f64, i32
  func.return %r : f64
}

// CHECK-LABEL: define double @"u.dynamic"(double %"x", i32 %"n")
// CHECK: call double @"__adpasses_powi_f64_32"(double %"x", i32 %"n")
// CHECK-NOT: llvm.pow
// CHECK-LABEL: define internal double @"__adpasses_powi_f64_32"
// CHECK: phi i32
// CHECK: lshr i32
func.func @dynamic(%x: f64, %n: i32) -> f64 {
  %r = math.fpowi %x, %n : f64, i32
  func.return %r : f64
}
