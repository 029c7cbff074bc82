// Enzyme-MLIR ReverseMode/parallel.mlir: y = a x elementwise in an
// scf.parallel (written without its scf.reduce terminator, which upstream
// inserts) and in an affine.parallel, asked for as with --enzyme-wrap
// (active, dup, dup -> nothing). The active scalar a is read by every
// iteration: Enzyme sums its adjoint with a parallel reduction
// (`reduce ("addf")` / `scf.reduce`) and adds x's shadow atomically;
// adpasses runs both loops as scf.for, carrying da as an iter_arg.
// Hand derivation: da = sum_i x[i] dy[i], dx[i] += a dy[i], dy consumed:
// at x = (1, 2, 3, 4), a = 1.5, dy = 0.5, dx = 0: da = 5,
// dx = (0.75, 0.75, 0.75, 0.75), dy = 0.
// RUN: ad-opt %s --reverse-wrap="fn=scf activities=active,dup,dup name=dscf" --reverse-wrap="fn=affine activities=active,dup,dup name=daffine" | filecheck %s --check-prefix=IR
// RUN: ad-opt %s --reverse-wrap="fn=scf activities=active,dup,dup name=dscf" --reverse-wrap="fn=affine activities=active,dup,dup name=daffine" | ad-run --entry run | filecheck %s

// IR-LABEL: func.func @scf_grad_add_(%a: f32, %x: memref<?xf32>, %dx: memref<?xf32>, %y: memref<?xf32>, %dy: memref<?xf32>) -> f32
// IR-NOT:     scf.parallel
// IR:         %[[DA:.*]] = scf.for {{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (f32) {
// IR:           %[[DYI:.*]] = memref.load %dy
// IR:           arith.mulf %[[DYI]], %a : f32
// IR:           arith.addf %[[ACC]], %{{.*}} : f32
// IR:           memref.store %{{.*}}, %dx
// IR:         func.return %[[DA]] : f32
// IR-LABEL: func.func @affine_grad_add_(
// IR-NOT:     affine.
// IR:         scf.for {{.*}} -> (f32) {
// IR:         func.return
// CHECK: scf da 5 dx 0.75 0.75 0.75 0.75 dy 0 0 0 0
// CHECK-NEXT: affine da 5 dx 0.75 0.75 0.75 0.75 dy 0 0 0 0

func.func @scf(%a: f32, %x: memref<?xf32>, %y: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.parallel (%arg9) = (%c0) to (%c4) step (%c1) {
    %0 = memref.load %x[%arg9] : memref<?xf32>
    %1 = arith.mulf %0, %a : f32
    memref.store %1, %y[%arg9] : memref<?xf32>
  }
  func.return
}

func.func @affine(%a: f32, %x: memref<?xf32>, %y: memref<?xf32>) {
  affine.parallel (%arg9) = (0) to (4) {
    %0 = affine.load %x[%arg9] : memref<?xf32>
    %1 = arith.mulf %0, %a : f32
    affine.store %1, %y[%arg9] : memref<?xf32>
  }
  func.return
}

func.func private @dscf(f32, memref<?xf32>, memref<?xf32>, memref<?xf32>, memref<?xf32>) -> f32
func.func private @daffine(f32, memref<?xf32>, memref<?xf32>, memref<?xf32>, memref<?xf32>) -> f32

// x[i] = i + 1, dx = 0, dy = 0.5.
func.func @fill(%x: memref<?xf32>, %dx: memref<?xf32>, %dy: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %one = arith.constant 1.0 : f32
  %half = arith.constant 0.5 : f32
  %zero = arith.constant 0.0 : f32
  scf.for %i = %c0 to %c4 step %c1 {
    %i64 = arith.index_cast %i : index to i64
    %f = arith.sitofp %i64 : i64 to f32
    %v = arith.addf %f, %one : f32
    memref.store %v, %x[%i] : memref<?xf32>
    memref.store %zero, %dx[%i] : memref<?xf32>
    memref.store %half, %dy[%i] : memref<?xf32>
  }
  func.return
}

func.func @show(%da: f32, %dx: memref<?xf32>, %dy: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %d0 = memref.load %dx[%c0] : memref<?xf32>
  %d1 = memref.load %dx[%c1] : memref<?xf32>
  %d2 = memref.load %dx[%c2] : memref<?xf32>
  %d3 = memref.load %dx[%c3] : memref<?xf32>
  %e0 = memref.load %dy[%c0] : memref<?xf32>
  %e1 = memref.load %dy[%c1] : memref<?xf32>
  %e2 = memref.load %dy[%c2] : memref<?xf32>
  %e3 = memref.load %dy[%c3] : memref<?xf32>
  printf.print_format "da {} dx {} {} {} {} dy {} {} {} {}\n", %da : f32, %d0 : f32, %d1 : f32, %d2 : f32, %d3 : f32, %e0 : f32, %e1 : f32, %e2 : f32, %e3 : f32
  func.return
}

func.func @run() {
  %c4 = arith.constant 4 : index
  %a = arith.constant 1.5 : f32
  %x = memref.alloc(%c4) : memref<?xf32>
  %dx = memref.alloc(%c4) : memref<?xf32>
  %y = memref.alloc(%c4) : memref<?xf32>
  %dy = memref.alloc(%c4) : memref<?xf32>
  func.call @fill(%x, %dx, %dy) : (memref<?xf32>, memref<?xf32>, memref<?xf32>) -> ()
  %da = func.call @dscf(%a, %x, %dx, %y, %dy) : (f32, memref<?xf32>, memref<?xf32>, memref<?xf32>, memref<?xf32>) -> f32
  printf.print_format "scf "
  func.call @show(%da, %dx, %dy) : (f32, memref<?xf32>, memref<?xf32>) -> ()
  func.call @fill(%x, %dx, %dy) : (memref<?xf32>, memref<?xf32>, memref<?xf32>) -> ()
  %db = func.call @daffine(%a, %x, %dx, %y, %dy) : (f32, memref<?xf32>, memref<?xf32>, memref<?xf32>, memref<?xf32>) -> f32
  printf.print_format "affine "
  func.call @show(%db, %dx, %dy) : (f32, memref<?xf32>, memref<?xf32>) -> ()
  memref.dealloc %x : memref<?xf32>
  memref.dealloc %dx : memref<?xf32>
  memref.dealloc %y : memref<?xf32>
  memref.dealloc %dy : memref<?xf32>
  func.return
}
