// A location alias that no `#locN = loc(...)` defines is an error at its use.
// RUN: not ad-opt %s 2>&1 | filecheck %s
// CHECK: undefined_location_alias.mlir:[[# @LINE + 2]]:{{[0-9]+}}: error: undefined location alias '#loc9'
func.func @g(%x: f64) -> f64 {
  func.return %x : f64 loc(#loc9)
}
#loc1 = loc("original.py":1:1)
