// Enzyme-MLIR ReverseMode/affine_for_memref.mlir: an affine.for that reads
// a[2 i] and writes its square to a[2 i + 1] (affine maps in the
// subscripts), asked for as with --enzyme-wrap (dup, const -> nothing).
// Enzyme tapes a[2 i] and runs a second, reversed loop. adpasses proves the
// iterations independent (the even elements read are never written, each
// odd element is written once), so each iteration's adjoint runs right
// after it, in the same loop, with the loaded value at hand: no tape.
// A neighbour, @chain, writes a[i + 1] from a[i]: iteration i + 1 reads
// what iteration i wrote, so its adjoint must run in a reversed loop.
// Hand derivations (the shadow on entry seeds a's final contents; each
// store consumes the shadow of the element it overwrites):
// - square_ip, a = (1, 2, 3, 4, 5, 6), ub = 2, da = 1 everywhere:
//   da[2i] += 2 a[2i] da[2i+1], da[2i+1] = 0: da = (3, 0, 7, 0, 1, 1);
//   a after = (1, 1, 3, 9, 5, 6);
// - chain, a[i+1] = a[i]^2 for i < 3: a[3] = a[0]^8; da = (0, 0, 0, 1):
//   da[0] = 8 a[0]^7 = 15.5897 at a[0] = 1.1, the rest 0.
// RUN: ad-opt %s --reverse-wrap="fn=square_ip activities=dup,const name=dsquare_ip" --reverse-wrap="fn=chain activities=dup,const name=dchain" | filecheck %s --check-prefix=IR
// RUN: ad-opt %s --reverse-wrap="fn=square_ip activities=dup,const name=dsquare_ip" --reverse-wrap="fn=chain activities=dup,const name=dchain" | ad-run --entry run | filecheck %s

// The affine subscripts become index arithmetic; one loop, no tape.
// IR-LABEL: func.func @square_ip_grad_dc_(%arg0: memref<?xf32>, %darg0: memref<?xf32>, %ub: index)
// IR-NOT:     affine.
// IR-NOT:     memref.alloc
// IR:         scf.for %iv =
// IR:           %[[EVEN:.*]] = arith.muli %iv, %{{.*}} : index
// IR:           %[[V:.*]] = memref.load %arg0[%[[EVEN]]]
// IR:           %[[ODD:.*]] = arith.addi %[[EVEN]], %{{.*}} : index
// IR:           memref.store %{{.*}}, %arg0[%[[ODD]]]
// IR:           memref.load %darg0[%[[ODD]]]
// IR:           memref.store %{{.*}}, %darg0[%[[ODD]]]
// IR:           memref.store %{{.*}}, %darg0[%[[EVEN]]]
// IR-NOT:     scf.for
// IR:         func.return
// The chain's adjoint runs in a second, reversed loop.
// IR-LABEL: func.func @chain_grad_dc_(
// IR:         scf.for
// IR:         scf.for
// IR:           arith.subi
// IR:         func.return
// CHECK: square_ip da 3 0 7 0 1 1 a 1 1 3 9 5 6
// CHECK-NEXT: chain da 15.5897 0 0 0

func.func @square_ip(%arg0: memref<?xf32>, %ub: index) {
  affine.for %iv = 0 to %ub {
    %v = affine.load %arg0[2 * %iv] : memref<?xf32>
    %sq = arith.mulf %v, %v : f32
    affine.store %sq, %arg0[2 * %iv + 1] : memref<?xf32>
    affine.yield
  }
  func.return
}

func.func @chain(%a: memref<?xf32>, %ub: index) {
  affine.for %iv = 0 to %ub {
    %v = affine.load %a[%iv] : memref<?xf32>
    %sq = arith.mulf %v, %v : f32
    affine.store %sq, %a[%iv + 1] : memref<?xf32>
  }
  func.return
}

func.func private @dsquare_ip(memref<?xf32>, memref<?xf32>, index)
func.func private @dchain(memref<?xf32>, memref<?xf32>, index)

func.func @run() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %c6 = arith.constant 6 : index
  %one = arith.constant 1.0 : f32
  %zero = arith.constant 0.0 : f32
  %a = memref.alloc(%c6) : memref<?xf32>
  %da = memref.alloc(%c6) : memref<?xf32>
  scf.for %i = %c0 to %c6 step %c1 {
    %i64 = arith.index_cast %i : index to i64
    %f = arith.sitofp %i64 : i64 to f32
    %v = arith.addf %f, %one : f32
    memref.store %v, %a[%i] : memref<?xf32>
    memref.store %one, %da[%i] : memref<?xf32>
  }
  func.call @dsquare_ip(%a, %da, %c2) : (memref<?xf32>, memref<?xf32>, index) -> ()
  %d0 = memref.load %da[%c0] : memref<?xf32>
  %d1 = memref.load %da[%c1] : memref<?xf32>
  %d2 = memref.load %da[%c2] : memref<?xf32>
  %d3 = memref.load %da[%c3] : memref<?xf32>
  %d4 = memref.load %da[%c4] : memref<?xf32>
  %d5 = memref.load %da[%c5] : memref<?xf32>
  %a0 = memref.load %a[%c0] : memref<?xf32>
  %a1 = memref.load %a[%c1] : memref<?xf32>
  %a2 = memref.load %a[%c2] : memref<?xf32>
  %a3 = memref.load %a[%c3] : memref<?xf32>
  %a4 = memref.load %a[%c4] : memref<?xf32>
  %a5 = memref.load %a[%c5] : memref<?xf32>
  printf.print_format "square_ip da {} {} {} {} {} {} a {} {} {} {} {} {}\n", %d0 : f32, %d1 : f32, %d2 : f32, %d3 : f32, %d4 : f32, %d5 : f32, %a0 : f32, %a1 : f32, %a2 : f32, %a3 : f32, %a4 : f32, %a5 : f32

  %x = memref.alloc(%c4) : memref<?xf32>
  %dx = memref.alloc(%c4) : memref<?xf32>
  %x0 = arith.constant 1.1 : f32
  memref.store %x0, %x[%c0] : memref<?xf32>
  scf.for %i = %c0 to %c4 step %c1 {
    memref.store %zero, %dx[%i] : memref<?xf32>
  }
  memref.store %one, %dx[%c3] : memref<?xf32>
  func.call @dchain(%x, %dx, %c3) : (memref<?xf32>, memref<?xf32>, index) -> ()
  %e0 = memref.load %dx[%c0] : memref<?xf32>
  %e1 = memref.load %dx[%c1] : memref<?xf32>
  %e2 = memref.load %dx[%c2] : memref<?xf32>
  %e3 = memref.load %dx[%c3] : memref<?xf32>
  printf.print_format "chain da {} {} {} {}\n", %e0 : f32, %e1 : f32, %e2 : f32, %e3 : f32
  memref.dealloc %a : memref<?xf32>
  memref.dealloc %da : memref<?xf32>
  memref.dealloc %x : memref<?xf32>
  memref.dealloc %dx : memref<?xf32>
  func.return
}
