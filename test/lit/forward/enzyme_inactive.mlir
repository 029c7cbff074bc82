// RUN: ad-opt %s --forward --allow-unregistered-dialect | filecheck %s --check-prefix=IR
// Enzyme-MLIR ForwardMode/inactive.mlir: an unknown op with no operands and no
// results touches no data that carries tangents: differentiation goes through
// and keeps it. (No numeric check: the unknown op cannot be compiled; the
// IR check shows the tangent is dx itself.)

// IR-LABEL: func.func @inactive_fwd_d_n(
// IR-SAME:  %{{[a-z0-9_]+}}: f64, %[[DX:[a-z0-9_]+]]: f64) -> f64
// IR-NEXT:    "test.foo"() : () -> ()
// IR-NEXT:    func.return %[[DX]] : f64
func.func @inactive(%x: f64) -> f64 {
  "test.foo"() : () -> ()
  func.return %x : f64
}

func.func @diff(%x: f64, %dx: f64) -> f64 {
  %r = ad.fwddiff @inactive(%x, %dx) {activity = [dup], ret_activity = [dupnoneed]} : (f64, f64) -> f64
  func.return %r : f64
}
