// scf.index_switch: the reverse is an scf.index_switch on the same value,
// each case undoing its own block (it used to be skipped: derivative 0).
// RUN: ad-opt %s --reverse | filecheck %s
// RUN: ad-run %s | filecheck %s --check-prefix=OUT

// The exp of case 2 is taped in the forward switch (one push at most: a
// tape of capacity 1) and popped in the reverse case 2.
// CHECK-LABEL: func.func @f_grad_ac_a(%x: f64, %k: index, %seed: f64) -> f64
// CHECK:         %tape_y = memref.alloca() : memref<1xf64>
// CHECK:         %r = scf.index_switch %k -> f64
// CHECK:         case 2 {
// CHECK-NEXT:      %y_1 = math.exp %x : f64
// CHECK:           memref.store %y_1, %tape_y
// CHECK:         %[[D:.*]] = scf.index_switch %k -> f64
// CHECK-NEXT:    case 0 {
// CHECK-NEXT:      %[[A:.*]] = arith.mulf %seed, %x : f64
// CHECK-NEXT:      %[[B:.*]] = arith.addf %[[A]], %[[A]] : f64
// CHECK-NEXT:      scf.yield %[[B]] : f64
// CHECK-NEXT:    }
// CHECK-NEXT:    case 2 {
// CHECK:           %[[E:.*]] = memref.load %tape_y
// CHECK-NEXT:      %[[F:.*]] = arith.mulf %seed, %[[E]] : f64
// CHECK-NEXT:      scf.yield %[[F]] : f64
// CHECK-NEXT:    }
// CHECK-NEXT:    default {
// CHECK-NEXT:      scf.yield %seed : f64
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[D]] : f64

// d/dx x*x at 3 = 6; d/dx exp(x) at 0.5 = exp(0.5); d/dx x = 1.
// OUT: case 0: 6
// OUT-NEXT: case 2: 1.64872
// OUT-NEXT: default: 1

func.func @f(%x: f64, %k: index) -> f64 {
  %r = scf.index_switch %k -> f64
  case 0 {
    %y = arith.mulf %x, %x : f64
    scf.yield %y : f64
  }
  case 2 {
    %y = math.exp %x : f64
    scf.yield %y : f64
  }
  default {
    scf.yield %x : f64
  }
  func.return %r : f64
}

func.func @main() {
  %a = arith.constant 3.0 : f64
  %h = arith.constant 0.5 : f64
  %s = arith.constant 1.0 : f64
  %k0 = arith.constant 0 : index
  %k2 = arith.constant 2 : index
  %k7 = arith.constant 7 : index
  %d0 = ad.autodiff @f(%a, %k0, %s) {activity = [active, const], ret_activity = [active]} : (f64, index, f64) -> f64
  %d2 = ad.autodiff @f(%h, %k2, %s) {activity = [active, const], ret_activity = [active]} : (f64, index, f64) -> f64
  %d7 = ad.autodiff @f(%a, %k7, %s) {activity = [active, const], ret_activity = [active]} : (f64, index, f64) -> f64
  printf.print_format "case 0: {}\n", %d0 : f64
  printf.print_format "case 2: {}\n", %d2 : f64
  printf.print_format "default: {}\n", %d7 : f64
  func.return
}
