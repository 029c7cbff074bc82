// Split mode end to end: --reverse-wrap with `split` writes @sp_aug (the
// primal arguments -> the primal result and the tape) and @sp_rev (the
// shadow, the seed and the tape -> df/da), which main calls through
// declarations; @comb is the combined gradient. f(x, a): acc = 1;
// acc = acc * x_i + a; at x = (1.5, -2, 0.25), a = 0.5 the accumulator
// runs 1, 2, -3.5, -0.375 (each value taped for the reverse), so by hand
// df/dx = (x2 x1, x2 acc1, acc2) = (-0.5, 0.5, -3.5), df/da = 1 + x2 + x2 x1
// = 0.75. The split and combined gradients must agree, and a central
// difference of f in a (h = 1e-5) must match df/da to 1e-8.
// RUN: ad-opt %s --reverse-wrap="fn=f name=sp split" --reverse-wrap="fn=f name=comb" | ad-run | filecheck %s
// CHECK: split -0.375 -0.5 0.5 -3.5 0.75
// CHECK: combined -0.5 0.5 -3.5 0.75
// CHECK: finite difference agrees
// RUN: ad-opt %s --reverse-wrap="fn=f name=sp split" | filecheck %s --check-prefix=IR
// IR-LABEL: func.func @f_grad_da_a_s_aug(%x: memref<?xf64>, %a: f64) -> (f64, memref<?xf64>, index, memref<1xindex>, memref<?xf64>) {
// IR:         memref.store %acc, %tape_acc[%{{.*}}] {ad.unchecked} : memref<?xf64>
// IR:         func.return %s, %x, %{{.*}}, %{{.*}}, %tape_acc : f64, memref<?xf64>, index, memref<1xindex>, memref<?xf64>
// IR-LABEL: func.func @f_grad_da_a_s_rev(%dx: memref<?xf64>, %seed: f64, %x: memref<?xf64>, %{{.*}}: index, %{{.*}}: memref<1xindex>, %tape_acc: memref<?xf64>) -> f64 {
// IR:         ad.shadow_check %x, %dx
// IR:         memref.load %tape_acc[%{{.*}}] {ad.unchecked} : memref<?xf64>
// IR:         memref.dealloc %tape_acc
// IR-LABEL: func.func @sp_aug(%x: memref<?xf64>, %a: f64) -> (f64, memref<?xf64>, index, memref<1xindex>, memref<?xf64>) {
// IR-NEXT:    %{{.*}} = func.call @f_grad_da_a_s_aug(%x, %a)
// IR-LABEL: func.func @sp_rev(%dx: memref<?xf64>, %d_ret0: f64, %tape0: memref<?xf64>, %tape1: index, %tape2: memref<1xindex>, %tape3: memref<?xf64>) -> f64 {
// IR-NEXT:    %{{.*}} = func.call @f_grad_da_a_s_rev(%dx, %d_ret0, %tape0, %tape1, %tape2, %tape3)
// IR-LABEL: func.func @main()
// IR:         func.call @sp_aug(%x, %a)
// IR:         func.call @sp_rev(%dx,
// IR-NOT:     !ad.split_tape

func.func @f(%x: memref<?xf64>, %a: f64) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?xf64>
  %one = arith.constant 1.0 : f64
  %s = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %one) -> (f64) {
    %v = memref.load %x[%i] : memref<?xf64>
    %p = arith.mulf %acc, %v : f64
    %q = arith.addf %p, %a : f64
    scf.yield %q : f64
  }
  func.return %s : f64
}
func.func private @sp_aug(memref<?xf64>, f64) -> (f64, !ad.split_tape)
func.func private @sp_rev(memref<?xf64>, f64, !ad.split_tape) -> f64
func.func private @comb(memref<?xf64>, memref<?xf64>, f64, f64) -> f64
func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %x = memref.alloc(%c3) : memref<?xf64>
  %dx = memref.alloc(%c3) : memref<?xf64>
  %v0 = arith.constant 1.5 : f64
  %v1 = arith.constant -2.0 : f64
  %v2 = arith.constant 0.25 : f64
  %zero = arith.constant 0.0 : f64
  %one = arith.constant 1.0 : f64
  %a = arith.constant 0.5 : f64
  memref.store %v0, %x[%c0] : memref<?xf64>
  memref.store %v1, %x[%c1] : memref<?xf64>
  memref.store %v2, %x[%c2] : memref<?xf64>
  scf.for %i = %c0 to %c3 step %c1 {
    memref.store %zero, %dx[%i] : memref<?xf64>
  }
  %y, %t = func.call @sp_aug(%x, %a) : (memref<?xf64>, f64) -> (f64, !ad.split_tape)
  %da = func.call @sp_rev(%dx, %one, %t) : (memref<?xf64>, f64, !ad.split_tape) -> f64
  %g0 = memref.load %dx[%c0] : memref<?xf64>
  %g1 = memref.load %dx[%c1] : memref<?xf64>
  %g2 = memref.load %dx[%c2] : memref<?xf64>
  printf.print_format "split {} {} {} {} {}\n", %y : f64, %g0 : f64, %g1 : f64, %g2 : f64, %da : f64
  scf.for %i = %c0 to %c3 step %c1 {
    memref.store %zero, %dx[%i] : memref<?xf64>
  }
  %db = func.call @comb(%x, %dx, %a, %one) : (memref<?xf64>, memref<?xf64>, f64, f64) -> f64
  %h0 = memref.load %dx[%c0] : memref<?xf64>
  %h1 = memref.load %dx[%c1] : memref<?xf64>
  %h2 = memref.load %dx[%c2] : memref<?xf64>
  printf.print_format "combined {} {} {} {}\n", %h0 : f64, %h1 : f64, %h2 : f64, %db : f64
  %h = arith.constant 1.0e-5 : f64
  %ap = arith.addf %a, %h : f64
  %am = arith.subf %a, %h : f64
  %fp = func.call @f(%x, %ap) : (memref<?xf64>, f64) -> f64
  %fm = func.call @f(%x, %am) : (memref<?xf64>, f64) -> f64
  %df = arith.subf %fp, %fm : f64
  %h2x = arith.addf %h, %h : f64
  %fd = arith.divf %df, %h2x : f64
  %err = arith.subf %fd, %da : f64
  %abs = math.absf %err : f64
  %tol = arith.constant 1.0e-8 : f64
  %ok = arith.cmpf olt, %abs, %tol : f64
  scf.if %ok {
    printf.print_format "finite difference agrees\n"
  } else {
    printf.print_format "finite difference differs by {}\n", %abs : f64
  }
  memref.dealloc %x : memref<?xf64>
  memref.dealloc %dx : memref<?xf64>
  func.return
}
