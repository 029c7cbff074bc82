// RUN: ad-opt -p ad-forward %s | filecheck %s --check-prefix=TAGS
// RUN: ad-opt --forward %s | filecheck %s --check-prefix=ELIDED
// RUN: ad-opt -p ad-forward,dce,ad-elide-shadow-checks %s | filecheck %s --check-prefix=ELIDED
// RUN: ad-opt -p ad-forward,ad-elide-shadow-checks,canonicalize,cse,dce %s | filecheck %s --check-prefix=ELIDED
// Bounds checks of tangent accesses. A tangent argument is checked against
// its primal at entry (ad.shadow_check); each tangent access repeats, at the
// same indices on memory of the same sizes, the primal access just before
// it in its block: ad-forward tags the pair (ad.twin_id on the primal,
// ad.twin_of on the tangent) and ad-elide-shadow-checks, last, drops the
// tangent access's check while the primal's is in the IR (keeping the
// primal load alive with ad.keep). The primal accesses stay checked: an
// index out of bounds is still an IndexError.

func.func @f(%x: memref<?xf64>, %k: index) -> f64 {
  %a = memref.load %x[%k] : memref<?xf64>
  %e = math.exp %a : f64
  memref.store %e, %x[%k] : memref<?xf64>
  func.return %e : f64
}
func.func @main(%x: memref<?xf64>, %dx: memref<?xf64>, %k: index) -> (f64, f64) {
  %r:2 = ad.fwddiff @f(%x, %dx, %k) {activity = [dup, const], ret_activity = [dup]} : (memref<?xf64>, memref<?xf64>, index) -> (f64, f64)
  func.return %r#0, %r#1 : f64, f64
}

// TAGS-LABEL: func.func @f_fwd_dc_d(%x: memref<?xf64>, %dx: memref<?xf64>, %k: index) -> (f64, f64) {
// TAGS-NEXT:    ad.shadow_check %x, %dx : memref<?xf64>, memref<?xf64>
// TAGS-NEXT:    %a = memref.load %x[%k] {ad.twin_id = [[L:[0-9]+]] : i64} : memref<?xf64>
// TAGS-NEXT:    %da = memref.load %dx[%k] {ad.twin_of = [[L]] : i64} : memref<?xf64>
// TAGS:         memref.store %e, %x[%k] {ad.twin_id = [[S:[0-9]+]] : i64} : memref<?xf64>
// TAGS-NEXT:    memref.store %de, %dx[%k] {ad.twin_of = [[S]] : i64} : memref<?xf64>

// ELIDED-LABEL: func.func @f_fwd_dc_d(%x: memref<?xf64>, %dx: memref<?xf64>, %k: index) -> (f64, f64) {
// ELIDED-NEXT:    ad.shadow_check %x, %dx : memref<?xf64>, memref<?xf64>
// ELIDED-NEXT:    %a = memref.load %x[%k] {ad.twin_id = [[L:[0-9]+]] : i64} : memref<?xf64>
// ELIDED-NEXT:    ad.keep %a : f64
// ELIDED-NEXT:    %da = memref.load %dx[%k] {ad.twin_of = [[L]] : i64, ad.unchecked} : memref<?xf64>
// ELIDED:         memref.store %e, %x[%k] {ad.twin_id = [[S:[0-9]+]] : i64} : memref<?xf64>
// ELIDED-NEXT:    memref.store %de, %dx[%k] {ad.twin_of = [[S]] : i64, ad.unchecked} : memref<?xf64>
