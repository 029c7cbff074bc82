// Enzyme-MLIR ReverseMode/scf_for_memref.mlir: nested loops carrying a
// product (Enzyme caches it in a 2-d buffer), a loop from %lb to %ub that
// squares an array in place and sums it (the reversed index must run from
// %ub - 1 down to %lb), and a loop with an i32 induction variable.
// Enzyme's `ub.poison` initial value (of an iter_arg whose initial value is
// never read) is a constant here: adpasses has no `ub` dialect.
// Hand derivations:
// - reduce(x, n) = x^(4n): at x = 1.1, n = 2: 8 x^7 = 15.5897;
// - reverse_index: x[i] <- x[i]^2 for lb <= i < ub, r = sum of the new
//   values. The shadow on entry is the seed of x's final contents, so
//   dx[i] = (dr + dx_in[i]) * 2 x[i] inside the range, dx_in[i] outside:
//   x = (1, 2, 3, 4, 5), lb = 1, ub = 4, dx_in = 0.5, dr = 1:
//   dx = (0.5, 6, 9, 12, 0.5); x after = (1, 4, 9, 16, 5);
// - reduce_i32(x, n) = x^n with an i32 loop: at x = 1.5, n = 3: 3 x^2 = 6.75.
// RUN: ad-opt %s --reverse | filecheck %s --check-prefix=IR
// RUN: ad-run %s | filecheck %s

// The in-place square tapes the overwritten values (or reverses the loop
// locally); the reverse loop's accesses of x's shadow are in [lb, ub).
// IR-LABEL: func.func @reverse_index_grad_ccd_a(
// IR:         ad.shadow_check %x, %dx
// CHECK: reduce 15.5897
// CHECK-NEXT: reverse_index 0.5 6 9 12 0.5 x 1 4 9 16 5
// CHECK-NEXT: reduce_i32 6.75

func.func @reduce(%x: f32, %ub: index) -> f32 {
  %lb = arith.constant 0 : index
  %step = arith.constant 1 : index
  %ub_inner = arith.constant 4 : index
  %sum_0 = arith.constant 1.0 : f32
  %sum2 = scf.for %iv2 = %lb to %ub step %step iter_args(%sum_iter2 = %sum_0) -> (f32) {
    %sum = scf.for %iv = %lb to %ub_inner step %step iter_args(%sum_iter = %sum_iter2) -> (f32) {
      %sum_next = arith.mulf %sum_iter, %x : f32
      scf.yield %sum_next : f32
    }
    scf.yield %sum : f32
  }
  func.return %sum2 : f32
}

func.func private @reverse_index(%lb: index, %ub: index, %x: memref<?xf32>) -> f32 {
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %res:2 = scf.for %iv = %lb to %ub step %c1 iter_args(%acc = %zero, %acc2 = %zero) -> (f32, f32) {
    %ld = memref.load %x[%iv] : memref<?xf32>
    %mulf = arith.mulf %ld, %ld : f32
    memref.store %mulf, %x[%iv] : memref<?xf32>
    %addf = arith.addf %mulf, %acc : f32
    scf.yield %addf, %addf : f32, f32
  }
  func.return %res#1 : f32
}

func.func @reduce_i32(%x: f32, %ub: i32) -> f32 {
  %lb = arith.constant 0 : i32
  %step = arith.constant 1 : i32
  %sum_0 = arith.constant 1.0 : f32
  %sum = scf.for %iv2 = %lb to %ub step %step iter_args(%sum_iter = %sum_0) -> (f32) : i32 {
    %sum_next = arith.mulf %sum_iter, %x : f32
    scf.yield %sum_next : f32
  }
  func.return %sum : f32
}

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %one = arith.constant 1.0 : f32
  %half = arith.constant 0.5 : f32
  %x11 = arith.constant 1.1 : f32
  %a = ad.autodiff @reduce(%x11, %c2, %one) {activity = [active, const], ret_activity = [active]} : (f32, index, f32) -> f32
  printf.print_format "reduce {}\n", %a : f32

  %x = memref.alloc(%c5) : memref<?xf32>
  %dx = memref.alloc(%c5) : memref<?xf32>
  scf.for %i = %c0 to %c5 step %c1 {
    %i64 = arith.index_cast %i : index to i64
    %f = arith.sitofp %i64 : i64 to f32
    %v = arith.addf %f, %one : f32
    memref.store %v, %x[%i] : memref<?xf32>
    memref.store %half, %dx[%i] : memref<?xf32>
  }
  ad.autodiff @reverse_index(%c1, %c4, %x, %dx, %one) {activity = [const, const, dup], ret_activity = [active]} : (index, index, memref<?xf32>, memref<?xf32>, f32) -> ()
  %d0 = memref.load %dx[%c0] : memref<?xf32>
  %d1 = memref.load %dx[%c1] : memref<?xf32>
  %d2 = memref.load %dx[%c2] : memref<?xf32>
  %d3 = memref.load %dx[%c3] : memref<?xf32>
  %d4 = memref.load %dx[%c4] : memref<?xf32>
  %y0 = memref.load %x[%c0] : memref<?xf32>
  %y1 = memref.load %x[%c1] : memref<?xf32>
  %y2 = memref.load %x[%c2] : memref<?xf32>
  %y3 = memref.load %x[%c3] : memref<?xf32>
  %y4 = memref.load %x[%c4] : memref<?xf32>
  printf.print_format "reverse_index {} {} {} {} {} x {} {} {} {} {}\n", %d0 : f32, %d1 : f32, %d2 : f32, %d3 : f32, %d4 : f32, %y0 : f32, %y1 : f32, %y2 : f32, %y3 : f32, %y4 : f32
  memref.dealloc %x : memref<?xf32>
  memref.dealloc %dx : memref<?xf32>

  %x15 = arith.constant 1.5 : f32
  %n3 = arith.constant 3 : i32
  %b = ad.autodiff @reduce_i32(%x15, %n3, %one) {activity = [active, const], ret_activity = [active]} : (f32, i32, f32) -> f32
  printf.print_format "reduce_i32 {}\n", %b : f32
  func.return
}
