// RUN: ad-opt %s --emit=llvm-ir | filecheck %s
// A tape is a {data, count, capacity} record on the stack; a growable tape
// (no capacity) doubles through the counting realloc when full.

// CHECK-LABEL: define double @"u.f"(double %"a", i64 %"n")
// CHECK: alloca {ptr, i64, i64}
// CHECK: call ptr @"__adpasses_realloc"
// CHECK-LABEL: define internal ptr @"__adpasses_realloc"
func.func @f(%a: f64, %n: index) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %t = ad.tape.create : !ad.tape<f64>
  scf.for %i = %c0 to %n step %c1 {
    ad.tape.push %a, %t : f64, !ad.tape<f64>
  }
  %z = arith.constant 0.0 : f64
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (f64) {
    %v = ad.tape.pop %t : !ad.tape<f64> -> f64
    %s = arith.addf %acc, %v : f64
    scf.yield %s : f64
  }
  ad.tape.free %t : !ad.tape<f64>
  func.return %r : f64
}
