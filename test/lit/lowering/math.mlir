// RUN: ad-opt %s --emit=llvm-ir | filecheck %s
// math lowers to LLVM intrinsics where LLVM has them (tanh too, so that
// loops with tanh vectorise: docs/lowering.md, "SIMD math"), and to libm
// calls (erff for f32) where it does not.

// CHECK-LABEL: define double @"u.f"(double %"x", float %"y")
// CHECK: call double @"llvm.exp.f64"(double %"x")
// CHECK: call double @"llvm.log.f64"
// CHECK: call double @"llvm.sqrt.f64"
// CHECK: call double @"llvm.tanh.f64"
// CHECK: call double @"erf"
// CHECK: call double @"log1p"
// CHECK: call double @"atan2"
// CHECK: call double @"llvm.pow.f64"
// CHECK: call double @"llvm.fma.f64"
// CHECK: call float @"erff"(float %"y")
func.func @f(%x: f64, %y: f32) -> f64 {
  %0 = math.exp %x : f64
  %1 = math.log %0 : f64
  %2 = math.sqrt %1 : f64
  %3 = math.tanh %2 : f64
  %4 = math.erf %3 : f64
  %5 = math.log1p %4 : f64
  %6 = math.atan2 %5, %x : f64
  %7 = math.powf %6, %x : f64
  %8 = math.fma %7, %x, %6 : f64
  %t = math.erf %y : f32
  %te = arith.extf %t : f32 to f64
  %r = arith.addf %8, %te : f64
  func.return %r : f64
}
