// ad-lower-tapes{marked-only=true}, the reverse pipeline's tape step:
// tapes of known capacity in the functions it works on (marked
// ad.gradient_of) become memrefs with unchecked accesses; tapes elsewhere
// stay. Without the option, every function's.
// RUN: ad-opt %s -p 'ad-lower-tapes{marked-only=true}' | filecheck %s
// RUN: ad-opt %s -p ad-lower-tapes | filecheck %s --check-prefix=ALL

// CHECK-LABEL: func.func @user(
// CHECK-NEXT:    %c = arith.constant 4 : index
// CHECK-NEXT:    %t = ad.tape.create %c : !ad.tape<f64>
// CHECK-LABEL: func.func @g_grad_a_a(
// CHECK-NOT:     ad.tape
// CHECK:         memref.alloca() : memref<4xf64>
// CHECK:         memref.store %x, %{{.*}}[%{{.*}}] {ad.unchecked} : memref<4xf64>
// CHECK:         memref.load %{{.*}}[%{{.*}}] {ad.unchecked} : memref<4xf64>
// CHECK-NOT:     ad.tape
// ALL-NOT:     ad.tape
func.func @user(%x: f64) -> f64 {
  %c = arith.constant 4 : index
  %t = ad.tape.create %c : !ad.tape<f64>
  ad.tape.push %x, %t : f64, !ad.tape<f64>
  %y = ad.tape.pop %t : !ad.tape<f64> -> f64
  ad.tape.free %t : !ad.tape<f64>
  func.return %y : f64
}
func.func @g_grad_a_a(%x: f64) -> f64 attributes {ad.gradient_of = {primal = @g, activity = ["active"], ret_activity = ["active"]}} {
  %c = arith.constant 4 : index
  %t = ad.tape.create %c : !ad.tape<f64>
  ad.tape.push %x, %t : f64, !ad.tape<f64>
  %y = ad.tape.pop %t : !ad.tape<f64> -> f64
  ad.tape.free %t : !ad.tape<f64>
  func.return %y : f64
}
