// RUN: ad-opt %s --emit=llvm-ir | filecheck %s
// arith lowers to LLVM instructions, one function per op kind; index is i64.

// CHECK-LABEL: define double @"u.floats"(double %"a", double %"b")
// CHECK: fadd double %"a", %"b"
// CHECK: fsub double
// CHECK: fmul double
// CHECK: fdiv double
// CHECK: frem double
// CHECK: fneg double
// CHECK: call double @"llvm.maximum.f64"
// CHECK: call double @"llvm.minnum.f64"
// CHECK: fcmp olt double
// CHECK: fcmp une double
// CHECK: select i1
func.func @floats(%a: f64, %b: f64) -> f64 {
  %0 = arith.addf %a, %b : f64
  %1 = arith.subf %0, %b : f64
  %2 = arith.mulf %1, %a : f64
  %3 = arith.divf %2, %b : f64
  %4 = arith.remf %3, %b : f64
  %5 = arith.negf %4 : f64
  %6 = arith.maximumf %5, %a : f64
  %7 = arith.minnumf %6, %b : f64
  %c = arith.cmpf olt, %7, %a : f64
  %d = arith.cmpf une, %7, %b : f64
  %e = arith.andi %c, %d : i1
  %r = arith.select %e, %7, %a : f64
  func.return %r : f64
}

// CHECK-LABEL: define i64 @"u.ints"(i64 %"i", i32 %"j")
// CHECK: sext i32 %"j" to i64
// CHECK: add i64
// CHECK: mul i64
// CHECK: icmp eq i64
// CHECK: sdiv i64
// CHECK: srem i64
// CHECK: icmp sle i64
// CHECK: sitofp i64
// CHECK: fptosi double
func.func @ints(%i: index, %j: i32) -> index {
  %k = arith.index_cast %j : i32 to index
  %s = arith.addi %i, %k : index
  %m = arith.muli %s, %i : index
  %f = arith.floordivsi %m, %k : index
  %le = arith.cmpi sle, %f, %i : index
  %r = arith.select %le, %f, %i : index
  %ri = arith.index_cast %r : index to i64
  %x = arith.sitofp %ri : i64 to f64
  %y = arith.fptosi %x : f64 to i64
  %z = arith.index_cast %y : i64 to index
  func.return %z : index
}
