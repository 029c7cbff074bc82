# RUN: %python %s | filecheck %s
# `a += e(b)` in place: where b may be a's memory only at run time (two
# arguments: f(x, x)), an `ad.overlaps` test chooses between the update
# reading a copy of b (then freed) and the update in place; a local array
# read needs neither; a view of a's own array (`a += a[::-1]`) is copied
# unconditionally (it overlaps). The API's version for arrays that share
# no memory marks the arguments ad.noalias, and ad-fold-overlap-checks
# removes the test and the copy.
import numpy as np

import adpasses
from adpasses.frontend import ArrayArg, build_module


def two_arguments(a, b):
    a += np.exp(b[::-1]) * a


def local_source(a):
    t = np.zeros(a.shape[0])
    t[0] = 1.0
    a += t


def own_view(a):
    a += a[::-1]


def store_argument(a, b):
    a[:] = np.tanh(b)


for f, n in ((two_arguments, 2), (local_source, 1), (own_view, 1), (store_argument, 2)):
    module, _ = build_module(f, [ArrayArg("float64", 1, True)] * n)
    print(module)
module, _ = adpasses.jit(two_arguments).build([np.ones(3), np.ones(3)], noalias=True)
print(module)

# CHECK-LABEL: func.func @two_arguments
# CHECK:         %[[REV:[0-9a-z_]+]] = memref.reinterpret_cast %b
# CHECK:         %[[O:[0-9a-z_]+]] = ad.overlaps %a, %[[REV]]
# CHECK-NEXT:    scf.if %[[O]] {
# CHECK-NEXT:      %[[T:[0-9a-z_]+]] = memref.alloc
# CHECK-NEXT:      linalg.generic {{.*}} ins(%[[REV]] : {{.*}}) outs(%[[T]] : memref<?xf64>)
# CHECK:           linalg.generic {{.*}} outs(%a : memref<?xf64>)
# CHECK:             math.exp
# CHECK:           memref.dealloc %[[T]]
# CHECK-NEXT:    } else {
# CHECK-NOT:       memref.alloc
# CHECK:           linalg.generic {{.*}} outs(%a : memref<?xf64>)
# CHECK:             math.exp
# CHECK-NOT:     memref.alloc
# CHECK:         func.return

# CHECK-LABEL: func.func @local_source
# CHECK-NOT:     ad.overlaps
# CHECK-NOT:     scf.if
# CHECK:         func.return

# CHECK-LABEL: func.func @own_view
# CHECK-NOT:     ad.overlaps
# CHECK:         memref.alloc
# CHECK:         linalg.generic {{.*}} outs(%a : memref<?xf64>)
# CHECK:         func.return

# A slice store from another argument takes the same test.
# CHECK-LABEL: func.func @store_argument
# CHECK:         %[[V:[0-9a-z_]+]] = memref.subview %a
# CHECK:         %[[O:[0-9a-z_]+]] = ad.overlaps %[[V]], %b
# CHECK-NEXT:    scf.if %[[O]] {
# CHECK-NEXT:      %[[T:[0-9a-z_]+]] = memref.alloc
# CHECK-NEXT:      linalg.generic {{.*}} ins(%b : memref<?xf64>) outs(%[[T]] : memref<?xf64>)
# CHECK:           memref.reinterpret_cast %[[T]]
# CHECK:           linalg.generic {{.*}} outs(%[[V]] : {{.*}})
# CHECK:             math.tanh
# CHECK:           memref.dealloc %[[T]]
# CHECK-NEXT:    } else {
# CHECK-NOT:       memref.alloc
# CHECK:           memref.reinterpret_cast %b
# CHECK:           linalg.generic {{.*}} outs(%[[V]] : {{.*}})
# CHECK:             math.tanh

# CHECK-LABEL: func.func @two_arguments(%a: memref<?xf64> {ad.noalias}, %b: memref<?xf64> {ad.noalias})
# CHECK-NOT:     ad.overlaps
# CHECK-NOT:     memref.alloc
# CHECK-NOT:     scf.if
# CHECK:         linalg.generic {{.*}} outs(%a : memref<?xf64>)
# CHECK-NEXT:    ^bb0
# CHECK-NEXT:      math.exp
# CHECK-NOT:     linalg.generic
# CHECK:         func.return
