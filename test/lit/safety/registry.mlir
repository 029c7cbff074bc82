// One dialect registry (adpasses.core.context.make_context) for ad-opt, ad-run
// and compile_module: ub.poison and affine parse in all of them (ad-run used
// to reject both: "Operation ub.poison is not registered"), and run.
// RUN: ad-opt %s | filecheck %s --check-prefix=OPT
// RUN: ad-run %s | filecheck %s --check-prefix=OUT

// OPT: %p = ub.poison : f64
// OPT: affine.for %i = 0 to 3

// three times x = 2 (the poison is never selected): 6
// OUT: s = 6

func.func @main() {
  %p = ub.poison : f64
  %x = arith.constant 2.0 : f64
  %z = arith.constant 0.0 : f64
  %c = arith.constant false
  %s = affine.for %i = 0 to 3 iter_args(%acc = %z) -> (f64) {
    %v = arith.select %c, %p, %x : f64
    %a = arith.addf %acc, %v : f64
    affine.yield %a : f64
  }
  printf.print_format "s = {}\n", %s : f64
  func.return
}
