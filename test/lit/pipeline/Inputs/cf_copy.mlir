// Input of count_while.mlir: a marked copy with unstructured control flow
// (as inlining a callee with cf ops would leave it).
func.func @f_grad_a_a(%x: f64) -> f64 attributes {ad.gradient_of = {primal = @f, activity = ["active"], ret_activity = ["active"]}} {
  %r = scf.execute_region -> f64 {
    cf.br ^bb1
  ^bb1:
    scf.yield %x : f64
  }
  func.return %r : f64
}
