// RUN: ad-opt %s -p ad-fold-overlap-checks | filecheck %s --check-prefix=FOLD
// RUN: ad-opt %s --emit=llvm-ir | filecheck %s --check-prefix=LLVM
// RUN: ad-opt %s -p ad-lower-ad-ops | filecheck %s --check-prefix=UPSTREAM
// `a += b` where b may be a's memory (two arguments: f(x, x)) is guarded
// by `ad.overlaps` (frontend/overlap.py): the update reads a copy of b
// only when the byte ranges of a and b intersect. ad-fold-overlap-checks
// folds the test to false where the alias analysis proves them disjoint
// (noalias arguments), leaving the in-place update alone; the test that
// stays is lowered to a bounds comparison of each memref's byte range.

func.func @may_alias(%a: memref<?xf64>, %b: memref<?xf64, strided<[?], offset: ?>>) {
  %c0 = arith.constant 0 : index
  %n = memref.dim %a, %c0 : memref<?xf64>
  %o = ad.overlaps %a, %b : memref<?xf64>, memref<?xf64, strided<[?], offset: ?>>
  scf.if %o {
    %t = memref.alloc(%n) : memref<?xf64>
    memref.copy %b, %t : memref<?xf64, strided<[?], offset: ?>> to memref<?xf64>
    linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%t : memref<?xf64>) outs(%a : memref<?xf64>) {
    ^bb0(%x: f64, %y: f64):
      %s = arith.addf %y, %x : f64
      linalg.yield %s : f64
    }
    memref.dealloc %t : memref<?xf64>
  } else {
    linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%b : memref<?xf64, strided<[?], offset: ?>>) outs(%a : memref<?xf64>) {
    ^bb0(%x: f64, %y: f64):
      %s = arith.addf %y, %x : f64
      linalg.yield %s : f64
    }
  }
  func.return
}

func.func @distinct(%a: memref<?xf64> {ad.noalias}, %b: memref<?xf64> {ad.noalias}, %c: memref<?xf64> {ad.noalias}) {
  %c0 = arith.constant 0 : index
  %n = memref.dim %a, %c0 : memref<?xf64>
  %o1 = ad.overlaps %a, %b : memref<?xf64>, memref<?xf64>
  %o2 = ad.overlaps %a, %c : memref<?xf64>, memref<?xf64>
  %o = arith.ori %o1, %o2 : i1
  scf.if %o {
    %t = memref.alloc(%n) : memref<?xf64>
    memref.copy %b, %t : memref<?xf64> to memref<?xf64>
    linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%t, %c : memref<?xf64>, memref<?xf64>) outs(%a : memref<?xf64>) {
    ^bb0(%x: f64, %z: f64, %y: f64):
      %p = arith.mulf %x, %z : f64
      %s = arith.addf %y, %p : f64
      linalg.yield %s : f64
    }
    memref.dealloc %t : memref<?xf64>
  } else {
    linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%b, %c : memref<?xf64>, memref<?xf64>) outs(%a : memref<?xf64>) {
    ^bb0(%x: f64, %z: f64, %y: f64):
      %p = arith.mulf %x, %z : f64
      %s = arith.addf %y, %p : f64
      linalg.yield %s : f64
    }
  }
  func.return
}

// FOLD-LABEL: func.func @may_alias
// FOLD:         %[[O:.*]] = ad.overlaps %a, %b
// FOLD-NEXT:    scf.if %[[O]] {
// FOLD:           memref.alloc
// FOLD:         } else {
// FOLD:           linalg.generic {{.*}} ins(%b : {{.*}}) outs(%a : memref<?xf64>)

// FOLD-LABEL: func.func @distinct
// FOLD-NOT:     ad.overlaps
// FOLD-NOT:     scf.if
// FOLD-NOT:     memref.alloc
// FOLD:         linalg.generic {{.*}} ins(%b, %c : memref<?xf64>, memref<?xf64>) outs(%a : memref<?xf64>)
// FOLD-NOT:     memref.alloc
// FOLD:         func.return

// LLVM-LABEL: define void @"u.may_alias"
// LLVM:         ptrtoint ptr %"a" to i64
// LLVM:         ptrtoint ptr %"b" to i64
// LLVM:         icmp ult i64
// LLVM:         icmp ult i64
// LLVM:         and i1
// LLVM:         br i1

// UPSTREAM-LABEL: func.func @may_alias
// UPSTREAM-NOT:   ad.overlaps
// UPSTREAM:       memref.extract_strided_metadata %a
// UPSTREAM:       "memref.extract_aligned_pointer_as_index"(%a)
// UPSTREAM:       memref.extract_strided_metadata %b
// UPSTREAM:       "memref.extract_aligned_pointer_as_index"(%b)
// UPSTREAM:       arith.cmpi ult
// UPSTREAM:       arith.cmpi ult
// UPSTREAM:       arith.andi
// UPSTREAM:       arith.xori
// UPSTREAM:       %[[O:.*]] = arith.andi
// UPSTREAM:       scf.if %[[O]] {
