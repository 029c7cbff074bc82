// RUN: ad-opt %s --print-alias 2>&1 >/dev/null | filecheck %s
// Invariant: two memref arguments may alias unless one of them carries
// `ad.noalias` or `llvm.noalias`; a copy loop a[i] -> b[i] therefore
// clobbers its load exactly when neither argument is noalias, and the alias
// classes merge the two arguments exactly then.

// CHECK-LABEL: alias analysis of @copy_plain
// CHECK-NEXT:    objects:
// CHECK-NEXT:      %a: argument #0
// CHECK-NEXT:      %b: argument #1
// CHECK-NEXT:    classes:
// CHECK-NEXT:      class 0 (objects %a, %b):
// CHECK-NEXT:        %a  argument
// CHECK-NEXT:        %b  argument
// CHECK-NEXT:    pairs:
// CHECK-NEXT:      %a, %b: may-alias: arguments %a and %b may alias (no noalias attribute)
// CHECK-NEXT:    loads:
// CHECK-NEXT:      %v = memref.load %a[%i] at {{.*}}noalias_arguments.mlir:{{[0-9]+}}:5: overwritten by
// CHECK-NEXT:        store at {{.*}}noalias_arguments.mlir:{{[0-9]+}}:5 (later in the same iteration): writes %b[%i], and arguments %b and %a may alias (no noalias attribute)
// CHECK-LABEL: alias analysis of @copy_ad_noalias
// CHECK:           %a: argument #0, ad.noalias
// CHECK:         classes:
// CHECK-NEXT:      class 0 (objects %a):
// CHECK-NEXT:        %a  argument
// CHECK-NEXT:      class 1 (objects %b):
// CHECK-NEXT:        %b  argument
// CHECK-NEXT:    pairs:
// CHECK-NEXT:      %a, %b: no-alias: argument %a is ad.noalias
// CHECK-NEXT:    loads:
// CHECK-NEXT:      %v = memref.load %a[%i] at {{.*}}: not overwritten
// CHECK-LABEL: alias analysis of @copy_llvm_noalias
// CHECK:           %b: argument #1, llvm.noalias
// CHECK:           %a, %b: no-alias: argument %b is llvm.noalias
// CHECK:           %v = memref.load %a[%i] at {{.*}}: not overwritten

func.func @copy_plain(%a: memref<?xf64>, %b: memref<?xf64>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %a[%i] : memref<?xf64>
    %w = arith.mulf %v, %v : f64
    memref.store %w, %b[%i] : memref<?xf64>
  }
  func.return
}

func.func @copy_ad_noalias(%a: memref<?xf64> {ad.noalias}, %b: memref<?xf64>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %a[%i] : memref<?xf64>
    memref.store %v, %b[%i] : memref<?xf64>
  }
  func.return
}

func.func @copy_llvm_noalias(%a: memref<?xf64>, %b: memref<?xf64> {llvm.noalias}, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %a[%i] : memref<?xf64>
    memref.store %v, %b[%i] : memref<?xf64>
  }
  func.return
}
