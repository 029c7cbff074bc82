// ad-promote-scratch: a local array that does not escape its function
// allocates nothing per call. Constant sizes up to max-bytes: a stack slot
// at the start of the entry block (out of the loop), deallocations erased,
// type and bounds checks as before. Other sizes, freed once in their own
// block: ad.workspace (+ ad.scratch) on the alloc and the dealloc.
// Escaping arrays (returned, yielded, stored, passed to a callee that
// returns or frees its parameter, or to a declaration) stay as they are.
// The LLVM lowering runs the pass (--emit=llvm-ir: no malloc for the slot).
// RUN: ad-opt %s -p ad-promote-scratch | filecheck %s
// RUN: ad-opt %s -p 'ad-promote-scratch{max-bytes=16}' | filecheck %s --check-prefix=SMALL
// RUN: ad-opt %s -p 'ad-promote-scratch{workspace=false}' | filecheck %s --check-prefix=NOWS
// RUN: ad-opt %s --emit=llvm-ir | filecheck %s --check-prefix=LLVM

// CHECK-LABEL: func.func @pairs(
// CHECK-NEXT:    %{{.*}} = arith.constant 3 : index
// CHECK-NEXT:    %d = memref.alloca(%{{.*}}) : memref<?xf64>
// CHECK-NOT:     memref.alloc(
// CHECK-NOT:     memref.dealloc
// CHECK:         memref.store %{{.*}}, %d[%k] : memref<?xf64>
// CHECK:         memref.load %d[%c0] : memref<?xf64>
// CHECK:         func.return
// SMALL-LABEL: func.func @pairs(
// SMALL:         %d = memref.alloc(%c3) {ad.workspace, ad.scratch} : memref<?xf64>
// SMALL:         memref.dealloc %d {ad.workspace, ad.scratch} : memref<?xf64>
// LLVM-LABEL:  define double @"u.pairs"(
// LLVM:        entry:
// LLVM-NEXT:     alloca [3 x double]
// LLVM-NOT:      call ptr @"__adpasses_alloc"
// LLVM:          ret double
func.func @pairs(%x: memref<?x3xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %n = memref.dim %x, %c0 : memref<?x3xf64>
  %z = arith.constant 0.0 : f64
  %e = scf.for %i = %c1 to %n step %c1 iter_args(%acc = %z) -> (f64) {
    %d = memref.alloc(%c3) : memref<?xf64>
    %i0 = arith.subi %i, %c1 : index
    scf.for %k = %c0 to %c3 step %c1 {
      %a = memref.load %x[%i, %k] : memref<?x3xf64>
      %b = memref.load %x[%i0, %k] : memref<?x3xf64>
      %s = arith.subf %a, %b : f64
      memref.store %s, %d[%k] : memref<?xf64>
    }
    %d0 = memref.load %d[%c0] : memref<?xf64>
    %sq = arith.mulf %d0, %d0 : f64
    %next = arith.addf %acc, %sq : f64
    memref.dealloc %d : memref<?xf64>
    scf.yield %next : f64
  }
  func.return %e : f64
}

// A dynamic size freed in its own block: a workspace.
// CHECK-LABEL: func.func @density(
// CHECK:         %rho = memref.alloc(%n) {ad.workspace, ad.scratch} : memref<?xf64>
// CHECK:         memref.dealloc %rho {ad.workspace, ad.scratch} : memref<?xf64>
// NOWS-LABEL:  func.func @density(
// NOWS:          %rho = memref.alloc(%n) : memref<?xf64>
// NOWS:          memref.dealloc %rho : memref<?xf64>
func.func @density(%x: memref<?xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?xf64>
  %rho = memref.alloc(%n) : memref<?xf64>
  memref.copy %x, %rho : memref<?xf64> to memref<?xf64>
  %v = memref.load %rho[%c0] : memref<?xf64>
  memref.dealloc %rho : memref<?xf64>
  func.return %v : f64
}

// A callee that only reads its parameter keeps no reference: promoted. One
// that returns it, or a declaration, may keep it: not promoted.
// CHECK-LABEL: func.func @calls(
// CHECK-NEXT:    %{{.*}} = arith.constant 2 : index
// CHECK-NEXT:    %read = memref.alloca(%{{.*}}) : memref<?xf64>
// CHECK:         %kept = memref.alloc(%c2) : memref<?xf64>
// CHECK:         %external = memref.alloc(%c2) : memref<?xf64>
// CHECK:         %yielded = memref.alloc(%c2) : memref<?xf64>
// CHECK:         func.return %r
func.func private @first(%a: memref<?xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %v = memref.load %a[%c0] : memref<?xf64>
  func.return %v : f64
}
func.func private @identity(%a: memref<?xf64>) -> memref<?xf64> {
  func.return %a : memref<?xf64>
}
func.func private @opaque(memref<?xf64>) -> ()
func.func @calls(%p: i1) -> memref<?xf64> {
  %c2 = arith.constant 2 : index
  %read = memref.alloc(%c2) : memref<?xf64>
  %v = func.call @first(%read) : (memref<?xf64>) -> f64
  memref.dealloc %read : memref<?xf64>
  %kept = memref.alloc(%c2) : memref<?xf64>
  %k = func.call @identity(%kept) : (memref<?xf64>) -> memref<?xf64>
  %external = memref.alloc(%c2) : memref<?xf64>
  func.call @opaque(%external) : (memref<?xf64>) -> ()
  memref.dealloc %external : memref<?xf64>
  %yielded = memref.alloc(%c2) : memref<?xf64>
  %r = scf.if %p -> (memref<?xf64>) {
    scf.yield %yielded : memref<?xf64>
  } else {
    scf.yield %k : memref<?xf64>
  }
  func.return %r : memref<?xf64>
}
