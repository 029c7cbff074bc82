// Enzyme-MLIR ReverseMode/affine_if.mlir: affine.for over a static memref
// with an affine.if on an integer set (i <= 2) selecting cos(x[i]) or 0,
// asked for as with --enzyme-wrap (here --reverse-wrap with dup, active).
// Hand derivation: f(x) = sum_{i <= 2} cos x[i]: dx[i] += -sin x[i] for
// i <= 2, dx[3] unchanged; at x = (0.1, 0.2, 0.3, 0.4), dx = 0, seed 1:
// dx = (-0.0998334, -0.198669, -0.29552, 0).
// RUN: ad-opt %s --reverse-wrap="fn=sum_tail activities=dup rets=active name=dsum" | filecheck %s --check-prefix=IR
// RUN: ad-opt %s --reverse-wrap="fn=sum_tail activities=dup rets=active name=dsum" | ad-run --entry run | filecheck %s

// The affine ops are lowered to scf before differentiating; the reverse is
// an scf.if on the same condition inside a reverse loop.
// IR-LABEL: func.func @sum_tail_grad_d_a(%x: memref<4xf64>, %dx: memref<4xf64>, %seed: f64)
// IR-NOT:     affine.
// IR:         scf.if
// IR:           math.sin
// CHECK: dx -0.0998334 -0.198669 -0.29552 0

#front = affine_set<(d0) : (-d0 + 2 >= 0)>

func.func @sum_tail(%x: memref<4xf64>) -> f64 {
  %zero = arith.constant 0.0 : f64
  %sum = affine.for %i = 0 to 4 iter_args(%acc = %zero) -> f64 {
    %selected = affine.if #front(%i) -> f64 {
      %value = affine.load %x[%i] : memref<4xf64>
      %cos_value = math.cos %value : f64
      affine.yield %cos_value : f64
    } else {
      affine.yield %zero : f64
    }
    %next = arith.addf %acc, %selected : f64
    affine.yield %next : f64
  }
  func.return %sum : f64
}

func.func private @dsum(memref<4xf64>, memref<4xf64>, f64)

func.func @run() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %x = memref.alloc() : memref<4xf64>
  %dx = memref.alloc() : memref<4xf64>
  %zero = arith.constant 0.0 : f64
  %one = arith.constant 1.0 : f64
  %tenth = arith.constant 0.1 : f64
  scf.for %i = %c0 to %c4 step %c1 {
    %i64 = arith.index_cast %i : index to i64
    %f = arith.sitofp %i64 : i64 to f64
    %k = arith.addf %f, %one : f64
    %v = arith.mulf %k, %tenth : f64
    memref.store %v, %x[%i] : memref<4xf64>
    memref.store %zero, %dx[%i] : memref<4xf64>
  }
  func.call @dsum(%x, %dx, %one) : (memref<4xf64>, memref<4xf64>, f64) -> ()
  %d0 = memref.load %dx[%c0] : memref<4xf64>
  %d1 = memref.load %dx[%c1] : memref<4xf64>
  %d2 = memref.load %dx[%c2] : memref<4xf64>
  %d3 = memref.load %dx[%c3] : memref<4xf64>
  printf.print_format "dx {} {} {} {}\n", %d0 : f64, %d1 : f64, %d2 : f64, %d3 : f64
  memref.dealloc %x : memref<4xf64>
  memref.dealloc %dx : memref<4xf64>
  func.return
}
