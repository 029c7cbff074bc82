// RUN: ad-opt %s --forward | filecheck %s --check-prefix=IR
// RUN: ad-run %s | filecheck %s
// Enzyme-MLIR ForwardMode/minmaxf.mlir: tangents of arith.maximumf/minimumf
// follow the operand chosen. (Enzyme's file also fixes the choice at signed
// zeros; a tie is a kink where either one-sided derivative is a valid choice,
// and the values here keep away from it.)
// Hand derivation, da = 0.5, db = 0.25: max(1, 2) -> db = 0.25;
// max(3, 2) -> da = 0.5; min(1, 2) -> da = 0.5; min(3, 2) -> db = 0.25.

// The tangent is a select between the operands' tangents on the same
// comparison the reverse rule uses.
// IR-LABEL: func.func @maximumf_fwd_dd_n(
// IR-SAME:  %[[A:[a-z0-9_]+]]: f64, %[[DA:[a-z0-9_]+]]: f64, %[[B:[a-z0-9_]+]]: f64, %[[DB:[a-z0-9_]+]]: f64) -> f64
// IR-NEXT:    %[[C:.*]] = arith.cmpf oge, %[[A]], %[[B]] : f64
// IR:         arith.select %[[C]], %[[DA]], %{{.*}} : f64
// IR:         arith.select %[[C]], %{{.*}}, %[[DB]] : f64
// IR-LABEL: func.func @minimumf_fwd_dd_n(
// IR-SAME:  %[[A:[a-z0-9_]+]]: f64, %[[DA:[a-z0-9_]+]]: f64, %[[B:[a-z0-9_]+]]: f64, %[[DB:[a-z0-9_]+]]: f64) -> f64
// IR-NEXT:    %[[C:.*]] = arith.cmpf ole, %[[A]], %[[B]] : f64

func.func @maximumf(%a: f64, %b: f64) -> f64 {
  %r = arith.maximumf %a, %b : f64
  func.return %r : f64
}

func.func @minimumf(%a: f64, %b: f64) -> f64 {
  %r = arith.minimumf %a, %b : f64
  func.return %r : f64
}

func.func @main() {
  %one = arith.constant 1.0 : f64
  %two = arith.constant 2.0 : f64
  %three = arith.constant 3.0 : f64
  %da = arith.constant 0.5 : f64
  %db = arith.constant 0.25 : f64
  %m1 = ad.fwddiff @maximumf(%one, %da, %two, %db) {activity = [dup, dup], ret_activity = [dupnoneed]} : (f64, f64, f64, f64) -> f64
  %m2 = ad.fwddiff @maximumf(%three, %da, %two, %db) {activity = [dup, dup], ret_activity = [dupnoneed]} : (f64, f64, f64, f64) -> f64
  %n1 = ad.fwddiff @minimumf(%one, %da, %two, %db) {activity = [dup, dup], ret_activity = [dupnoneed]} : (f64, f64, f64, f64) -> f64
  %n2 = ad.fwddiff @minimumf(%three, %da, %two, %db) {activity = [dup, dup], ret_activity = [dupnoneed]} : (f64, f64, f64, f64) -> f64
  // CHECK: max(1,2) 0.25 max(3,2) 0.5 min(1,2) 0.5 min(3,2) 0.25
  printf.print_format "max(1,2) {} max(3,2) {} min(1,2) {} min(3,2) {}\n", %m1 : f64, %m2 : f64, %n1 : f64, %n2 : f64
  func.return
}
