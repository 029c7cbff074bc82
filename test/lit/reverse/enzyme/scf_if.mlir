// Enzyme-MLIR ReverseMode/scf_if.mlir: nested scf.if with a yielded result,
// and an scf.if with one active and one integer (inactive) result.
// Hand derivations, at x = 0.7, seed 1:
// - nested_if(x, c1, c2) = c1 ? x^2 : (c2 ? cos x : 4) + x:
//   c1: 2x = 1.4; !c1, c2: 1 - sin x = 0.35578...; !c1, !c2: 1;
// - some_res_inactive(x, c) = (c ? x^2 : cos x + x, fptosi(same)):
//   c: 1.4; !c: 0.35578... (the integer result is const).
// RUN: ad-opt %s --reverse | filecheck %s --check-prefix=IR
// RUN: ad-run %s | filecheck %s

// The reverse is an scf.if on the same condition, nested as the forward;
// the inner reverse reads the inner condition again (a function argument:
// no tape).
// IR-LABEL: func.func @nested_if_grad_acc_a(
// IR-NOT:     ad.tape
// IR:         scf.if %arg1 -> (f64) {
// IR:         } else {
// IR:           scf.if %arg2 -> (f64) {
// IR:             math.sin

func.func @nested_if(%arg0: f64, %arg1: i1, %arg2: i1) -> f64 {
  %cst = arith.constant 4.000000e+00 : f64
  %0 = scf.if %arg1 -> (f64) {
    %1 = arith.mulf %arg0, %arg0 : f64
    scf.yield %1 : f64
  } else {
    %1 = scf.if %arg2 -> (f64) {
      %3 = math.cos %arg0 : f64
      scf.yield %3 : f64
    } else {
      scf.yield %cst : f64
    }
    %2 = arith.addf %1, %arg0 : f64
    scf.yield %2 : f64
  }
  func.return %0 : f64
}

func.func @some_res_inactive(%arg0: f64, %arg1: i1) -> (f64, i64) {
  %0, %1 = scf.if %arg1 -> (f64, i64) {
    %a = arith.mulf %arg0, %arg0 : f64
    %b = arith.fptosi %a : f64 to i64
    scf.yield %a, %b : f64, i64
  } else {
    %a = math.cos %arg0 : f64
    %b = arith.addf %a, %arg0 : f64
    %c = arith.fptosi %b : f64 to i64
    scf.yield %b, %c : f64, i64
  }
  func.return %0, %1 : f64, i64
}

func.func @main() {
  %x = arith.constant 0.7 : f64
  %one = arith.constant 1.0 : f64
  %t = arith.constant true
  %f = arith.constant false
  %a = ad.autodiff @nested_if(%x, %t, %t, %one) {activity = [active, const, const], ret_activity = [active]} : (f64, i1, i1, f64) -> f64
  %b = ad.autodiff @nested_if(%x, %f, %t, %one) {activity = [active, const, const], ret_activity = [active]} : (f64, i1, i1, f64) -> f64
  %c = ad.autodiff @nested_if(%x, %f, %f, %one) {activity = [active, const, const], ret_activity = [active]} : (f64, i1, i1, f64) -> f64
  // CHECK: nested_if 1.4 0.355782 1
  printf.print_format "nested_if {} {} {}\n", %a : f64, %b : f64, %c : f64
  %d = ad.autodiff @some_res_inactive(%x, %t, %one) {activity = [active, const], ret_activity = [active, const]} : (f64, i1, f64) -> f64
  %e = ad.autodiff @some_res_inactive(%x, %f, %one) {activity = [active, const], ret_activity = [active, const]} : (f64, i1, f64) -> f64
  // CHECK-NEXT: some_res_inactive 1.4 0.355782
  printf.print_format "some_res_inactive {} {}\n", %d : f64, %e : f64
  func.return
}
