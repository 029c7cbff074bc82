# RUN: %python %s | filecheck %s
# `h[:] = expr` writes the target view itself: one linalg.generic whose
# output is the subview of h, no temporary and no copy loop, when every
# array the expression reads is other memory than h's (here: arguments,
# h local) or h itself at the element written. A shifted read of the
# target (`x[1:] = x[:-1] * 2.0`) is computed into a temporary first
# (numpy's copy-first semantics), then copied.
import numpy as np

from adpasses.frontend import ArrayArg, build_module


def local_target(x, y):
    h = np.zeros(x.shape[0])
    h[:] = np.tanh(x * y)
    return np.sum(h)


def shift(x):
    x[1:] = x[:-1] * 2.0


for f, n in ((local_target, 2), (shift, 1)):
    module, _ = build_module(f, [ArrayArg("float64", 1, True)] * n)
    print(module)

# CHECK-LABEL: func.func @local_target
# CHECK:         %[[H:[0-9a-z_]+]] = memref.alloc(%{{.*}}) : memref<?xf64>
# CHECK:         %[[VIEW:[0-9a-z_]+]] = memref.subview %[[H]]
# CHECK:         ad.raise_if %{{.*}} {exception = "ValueError", message = "could not broadcast input array from shape {0:shape1} into shape {1:shape1}"}
# CHECK-NOT:     memref.alloc(
# CHECK:         linalg.generic {{.*}} outs(%[[VIEW]] : memref<?xf64, strided<[?], offset: ?>>)
# CHECK:           math.tanh
# CHECK-NOT:     memref.alloc(
# CHECK:         func.return

# CHECK-LABEL: func.func @shift
# CHECK:         %[[TMP:[0-9a-z_]+]] = memref.alloc(%{{.*}}) : memref<?xf64>
# CHECK-NEXT:    linalg.generic {{.*}} outs(%[[TMP]] : memref<?xf64>)
# CHECK:         scf.for
# CHECK:           memref.load %[[TMP]]
# CHECK:         memref.dealloc %[[TMP]]
