// RUN: ad-opt -p ad-forward %s | filecheck %s
// Scalar tangents come from the op table's partials: sum_i partial_i * t_i,
// folded (a partial 1 is no multiplication: divf's 1/y becomes a division);
// extf's tangent is extf'd; max and select choose the tangent of the
// operand they choose; an integer operand (fpowi's exponent) has none; a
// dupnoneed result whose value carries no derivative returns a zero tangent.

func.func @scalar(%x: f64, %y: f64, %h: f32, %n: i32) -> (f64, f64) {
  %a = math.sin %x : f64
  %b = arith.divf %a, %y : f64
  %e = arith.extf %h : f32 to f64
  %m = arith.maximumf %b, %e : f64
  %p = math.fpowi %m, %n : f64, i32
  %c = arith.cmpf olt, %x, %y : f64
  %s = arith.select %c, %p, %x : f64
  %k = arith.constant 2.0 : f64
  %z = arith.mulf %k, %y : f64
  func.return %s, %z : f64, f64
}
func.func @main(%x: f64, %dx: f64, %y: f64, %h: f32, %dh: f32, %n: i32) -> (f64, f64) {
  %r:3 = ad.fwddiff @scalar(%x, %dx, %y, %h, %dh, %n) {activity = [dup, const, dup, const], ret_activity = [dup, dupnoneed]} : (f64, f64, f64, f32, f32, i32) -> (f64, f64, f64)
  func.return %r#1, %r#2 : f64, f64
}

// CHECK-LABEL: func.func @scalar_fwd_dcdc_dn(%x: f64, %dx: f64, %y: f64, %h: f32, %dh: f32, %n: i32) -> (f64, f64, f64) {
// CHECK-NEXT:    %a = math.sin %x : f64
// CHECK-NEXT:    %[[COS:.*]] = math.cos %x : f64
// CHECK-NEXT:    %da = arith.mulf %dx, %[[COS]] : f64
// CHECK-NEXT:    %b = arith.divf %a, %y : f64
// CHECK-NEXT:    %db = arith.divf %da, %y : f64
// CHECK-NEXT:    %e = arith.extf %h : f32 to f64
// CHECK-NEXT:    %de = arith.extf %dh : f32 to f64
// CHECK-NEXT:    %m = arith.maximumf %b, %e : f64
// CHECK-NEXT:    %[[GE:.*]] = arith.cmpf oge, %b, %e : f64
// CHECK-NEXT:    %[[Z:.*]] = arith.constant 0.000000e+00 : f64
// CHECK-NEXT:    %[[L:.*]] = arith.select %[[GE]], %db, %[[Z]] : f64
// CHECK-NEXT:    %[[R:.*]] = arith.select %[[GE]], %[[Z]], %de : f64
// CHECK-NEXT:    %dm = arith.addf %[[L]], %[[R]] : f64
// CHECK-NEXT:    %p = math.fpowi %m, %n : f64, i32
// CHECK:         %dp = arith.select
// CHECK-NEXT:    %c = arith.cmpf olt, %x, %y : f64
// CHECK-NEXT:    %s = arith.select %c, %p, %x : f64
// CHECK-NEXT:    %[[SL:.*]] = arith.select %c, %dp, %[[Z]] : f64
// CHECK-NEXT:    %[[SR:.*]] = arith.select %c, %[[Z]], %dx : f64
// CHECK-NEXT:    %ds = arith.addf %[[SL]], %[[SR]] : f64
// CHECK-NEXT:    func.return %s, %ds, %[[Z]] : f64, f64, f64
// CHECK-LABEL: func.func @main
// CHECK-NEXT:    %r, %r_1, %r_2 = func.call @scalar_fwd_dcdc_dn(%x, %dx, %y, %h, %dh, %n)
