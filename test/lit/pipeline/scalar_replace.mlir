// ad-scalar-replace: a small local array (constant sizes, at most
// max-elements elements) used only by loads, stores into it, memref.dim and
// its deallocation, at constant indices within its sizes, becomes the SSA
// values stored into it: no memref.alloc/alloca, no load, no store left.
// Tiny loops with constant bounds that index it are unrolled first (at most
// unroll-limit ops in their copies); an element written in an scf.for or
// scf.if and read after it (or in the next iteration) is carried as an
// iter_arg / result. Arrays that escape (returned, passed to a call), are
// viewed, indexed dynamically or out of bounds, read before any store, too
// large, or accessed in an scf.while stay in memory, as written.
// In the reverse pipeline (marked-only=true) only the copies marked
// ad.gradient_of are rewritten.
// RUN: ad-opt %s -p ad-scalar-replace | filecheck %s
// RUN: ad-opt %s -p 'ad-scalar-replace{unroll-limit=20}' | filecheck %s --check-prefix=LIMIT
// RUN: ad-opt %s -p 'ad-scalar-replace{max-elements=4}' | filecheck %s --check-prefix=SMALL
// RUN: ad-opt %s -p 'ad-scalar-replace{marked-only=true}' | filecheck %s --check-prefix=MARKED

// The pair loop of small-vector code: d = np.zeros(3); d[k] = x[i,k] - x[j,k];
// r2 = d[0]*d[0] + d[1]*d[1] + d[2]*d[2]. Both loops unrolled, the loads are
// the subtractions, the array and its deallocation are gone.
// CHECK-LABEL: func.func @pair(
// CHECK-NOT:     memref.alloc
// CHECK-NOT:     scf.for
// CHECK:         %[[K0:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %a = memref.load %x[%i, %[[K0]]] : memref<?x3xf64>
// CHECK-NEXT:    %b = memref.load %x[%j, %[[K0]]] : memref<?x3xf64>
// CHECK-NEXT:    %v = arith.subf %a, %b : f64
// CHECK-NEXT:    %[[K1:.*]] = arith.constant 1 : index
// CHECK-NEXT:    %a_1 = memref.load %x[%i, %[[K1]]] : memref<?x3xf64>
// CHECK-NEXT:    %b_1 = memref.load %x[%j, %[[K1]]] : memref<?x3xf64>
// CHECK-NEXT:    %v_1 = arith.subf %a_1, %b_1 : f64
// CHECK-NEXT:    %[[K2:.*]] = arith.constant 2 : index
// CHECK-NEXT:    %a_2 = memref.load %x[%i, %[[K2]]] : memref<?x3xf64>
// CHECK-NEXT:    %b_2 = memref.load %x[%j, %[[K2]]] : memref<?x3xf64>
// CHECK-NEXT:    %v_2 = arith.subf %a_2, %b_2 : f64
// CHECK-NEXT:    %s0 = arith.mulf %v, %v : f64
// CHECK-NEXT:    %s1 = arith.mulf %v_1, %v_1 : f64
// CHECK-NEXT:    %r = arith.addf %s0, %s1 : f64
// CHECK-NEXT:    %s2 = arith.mulf %v_2, %v_2 : f64
// CHECK-NEXT:    %r2 = arith.addf %r, %s2 : f64
// CHECK-NEXT:    func.return %r2 : f64
// LIMIT-LABEL: func.func @pair(
// LIMIT-NOT:     memref.alloc
// SMALL-LABEL: func.func @pair(
// SMALL-NOT:     memref.alloc
// MARKED-LABEL: func.func @pair(
// MARKED:         memref.alloc
func.func @pair(%x: memref<?x3xf64>, %i: index, %j: index) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %z = arith.constant 0.0 : f64
  %d = memref.alloc(%c3) : memref<?xf64>
  scf.for %t = %c0 to %c3 step %c1 {
    memref.store %z, %d[%t] : memref<?xf64>
  }
  scf.for %k = %c0 to %c3 step %c1 {
    %a = memref.load %x[%i, %k] : memref<?x3xf64>
    %b = memref.load %x[%j, %k] : memref<?x3xf64>
    %v = arith.subf %a, %b : f64
    memref.store %v, %d[%k] : memref<?xf64>
  }
  %d0 = memref.load %d[%c0] : memref<?xf64>
  %s0 = arith.mulf %d0, %d0 : f64
  %d1 = memref.load %d[%c1] : memref<?xf64>
  %s1 = arith.mulf %d1, %d1 : f64
  %r = arith.addf %s0, %s1 : f64
  // d[-1], as the frontend writes it: len(d) - 1
  %m2 = arith.constant -1 : index
  %len = memref.dim %d, %c0 : memref<?xf64>
  %w2 = arith.addi %len, %m2 : index
  %d2 = memref.load %d[%w2] : memref<?xf64>
  %s2 = arith.mulf %d2, %d2 : f64
  %r2 = arith.addf %r, %s2 : f64
  memref.dealloc %d : memref<?xf64>
  func.return %r2 : f64
}

// A force accumulated over a loop with dynamic bounds: f[0], f[1] are
// iter_args of the loop (read in the next iteration and after it); f[2],
// written before the loop and only read after it, is the value stored.
// CHECK-LABEL: func.func @accumulate(
// CHECK-NOT:     memref.alloca
// CHECK:         %f0, %f1 = scf.for %j = %c0 to %n step %c1 iter_args(%[[F0:.*]] = %z, %[[F1:.*]] = %z) -> (f64, f64) {
// CHECK-NEXT:      %v = memref.load %x[%j] : memref<?xf64>
// CHECK-NEXT:      %n0 = arith.addf %[[F0]], %v : f64
// CHECK-NEXT:      %n1 = arith.mulf %[[F1]], %v : f64
// CHECK-NEXT:      scf.yield %n0, %n1 : f64, f64
// CHECK-NEXT:    }
// CHECK-NEXT:    %s = arith.addf %f0, %f1 : f64
// CHECK-NEXT:    %t = arith.addf %s, %y : f64
// CHECK-NEXT:    func.return %t : f64
func.func @accumulate(%x: memref<?xf64>, %y: f64) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %z = arith.constant 0.0 : f64
  %n = memref.dim %x, %c0 : memref<?xf64>
  %f = memref.alloca() : memref<3xf64>
  memref.store %z, %f[%c0] : memref<3xf64>
  memref.store %z, %f[%c1] : memref<3xf64>
  memref.store %y, %f[%c2] : memref<3xf64>
  scf.for %j = %c0 to %n step %c1 {
    %v = memref.load %x[%j] : memref<?xf64>
    %o0 = memref.load %f[%c0] : memref<3xf64>
    %n0 = arith.addf %o0, %v : f64
    memref.store %n0, %f[%c0] : memref<3xf64>
    %o1 = memref.load %f[%c1] : memref<3xf64>
    %n1 = arith.mulf %o1, %v : f64
    memref.store %n1, %f[%c1] : memref<3xf64>
  }
  %a = memref.load %f[%c0] : memref<3xf64>
  %b = memref.load %f[%c1] : memref<3xf64>
  %s = arith.addf %a, %b : f64
  %c = memref.load %f[%c2] : memref<3xf64>
  %t = arith.addf %s, %c : f64
  func.return %t : f64
}

// A store under scf.if (without else): the element read after the if is
// its result, the missing branch yields the value before it. An element
// written in a loop but dead after each iteration is not carried.
// CHECK-LABEL: func.func @conditional(
// CHECK-NOT:     memref.alloc
// CHECK:         %t0 = scf.if %c -> (f64) {
// CHECK-NEXT:      %m = arith.mulf %y, %y : f64
// CHECK-NEXT:      scf.yield %m : f64
// CHECK-NEXT:    } else {
// CHECK-NEXT:      scf.yield %y : f64
// CHECK-NEXT:    }
// CHECK-NEXT:    %r = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %t0) -> (f64) {
// CHECK-NEXT:      %kf = arith.index_cast %k : index to i64
// CHECK-NEXT:      %kd = arith.sitofp %kf : i64 to f64
// CHECK-NEXT:      %u = arith.addf %kd, %acc : f64
// CHECK-NEXT:      scf.yield %u : f64
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %r : f64
func.func @conditional(%y: f64, %c: i1, %n: index) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %t = memref.alloc() : memref<2xf64>
  memref.store %y, %t[%c0] : memref<2xf64>
  scf.if %c {
    %m = arith.mulf %y, %y : f64
    memref.store %m, %t[%c0] : memref<2xf64>
  }
  %v = memref.load %t[%c0] : memref<2xf64>
  %r = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %v) -> (f64) {
    %kf = arith.index_cast %k : index to i64
    %kd = arith.sitofp %kf : i64 to f64
    memref.store %kd, %t[%c1] : memref<2xf64>
    %w = memref.load %t[%c1] : memref<2xf64>
    %u = arith.addf %w, %acc : f64
    scf.yield %u : f64
  }
  memref.dealloc %t : memref<2xf64>
  func.return %r : f64
}

// A 3x3 matrix times a vector, nested loops with constant bounds: both
// levels unrolled, the matrix and the vector are values. With
// unroll-limit=20 (the outer loop's copies would hold 3 x 3 x 8 ops) the
// inner loops unroll, the outer stays, and so does the matrix (its row index
// is the outer induction variable).
// CHECK-LABEL: func.func @matvec(
// CHECK-NOT:     memref.alloc
// CHECK-NOT:     scf.for
// CHECK-NOT:     memref.store
// CHECK:         %e = memref.load %m[%at] : memref<9xf64>
// CHECK:         %e_3 = memref.load %m[%at_3] : memref<9xf64>
// CHECK-NOT:     memref.load %a
// CHECK:         %x = memref.load %v[%{{.*}}] : memref<3xf64>
// CHECK-NEXT:    %ex = arith.mulf %e, %x : f64
// CHECK:         %x_3 = memref.load %v[%{{.*}}] : memref<3xf64>
// CHECK-NEXT:    %ex_3 = arith.mulf %e_3, %x_3 : f64
// CHECK:         %out = arith.mulf %n_2, %n_5 : f64
// CHECK-NEXT:    func.return %out : f64
// LIMIT-LABEL: func.func @matvec(
// LIMIT:         %a = memref.alloc() : memref<3x3xf64>
// LIMIT:         scf.for %p = %c0 to %c3 step %c1 {
// LIMIT-NOT:       scf.for
// LIMIT:           memref.store %e_2, %a[%p, %{{.*}}] : memref<3x3xf64>
// LIMIT:         scf.for %r = %c0 to %c3 step %c1 {
// LIMIT-NOT:       scf.for
// LIMIT:           memref.load %a[%r, %{{.*}}] : memref<3x3xf64>
// LIMIT:         func.return
// SMALL-LABEL: func.func @matvec(
// SMALL:         %a = memref.alloc() : memref<3x3xf64>
// SMALL:         func.return
func.func @matvec(%m: memref<9xf64>, %v: memref<3xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %z = arith.constant 0.0 : f64
  %a = memref.alloc() : memref<3x3xf64>
  scf.for %p = %c0 to %c3 step %c1 {
    scf.for %q = %c0 to %c3 step %c1 {
      %row = arith.muli %p, %c3 : index
      %at = arith.addi %row, %q : index
      %e = memref.load %m[%at] : memref<9xf64>
      memref.store %e, %a[%p, %q] : memref<3x3xf64>
    }
  }
  %w = memref.alloc() : memref<3xf64>
  scf.for %r = %c0 to %c3 step %c1 {
    %s = scf.for %q = %c0 to %c3 step %c1 iter_args(%acc = %z) -> (f64) {
      %e = memref.load %a[%r, %q] : memref<3x3xf64>
      %x = memref.load %v[%q] : memref<3xf64>
      %ex = arith.mulf %e, %x : f64
      %n = arith.addf %acc, %ex : f64
      scf.yield %n : f64
    }
    memref.store %s, %w[%r] : memref<3xf64>
  }
  %w0 = memref.load %w[%c0] : memref<3xf64>
  %w2 = memref.load %w[%c1] : memref<3xf64>
  %out = arith.mulf %w0, %w2 : f64
  memref.dealloc %w : memref<3xf64>
  memref.dealloc %a : memref<3x3xf64>
  func.return %out : f64
}

// Negative cases: each array stays, with its accesses.
// CHECK-LABEL: func.func @returned(
// CHECK:         %d = memref.alloc() : memref<3xf64>
// CHECK:         func.return %d : memref<3xf64>
func.func @returned(%y: f64) -> memref<3xf64> {
  %c0 = arith.constant 0 : index
  %d = memref.alloc() : memref<3xf64>
  memref.store %y, %d[%c0] : memref<3xf64>
  func.return %d : memref<3xf64>
}

// CHECK-LABEL: func.func @passed_to_call(
// CHECK:         %d = memref.alloc() : memref<3xf64>
// CHECK:         func.call @first(%d)
// CHECK:         memref.dealloc %d
func.func @first(%a: memref<3xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %v = memref.load %a[%c0] : memref<3xf64>
  func.return %v : f64
}
func.func @passed_to_call(%y: f64) -> f64 {
  %c0 = arith.constant 0 : index
  %d = memref.alloc() : memref<3xf64>
  memref.store %y, %d[%c0] : memref<3xf64>
  %v = func.call @first(%d) : (memref<3xf64>) -> f64
  memref.dealloc %d : memref<3xf64>
  func.return %v : f64
}

// CHECK-LABEL: func.func @viewed(
// CHECK:         %d = memref.alloc() : memref<3xf64>
// CHECK:         memref.subview %d
func.func @viewed(%y: f64) -> f64 {
  %c0 = arith.constant 0 : index
  %d = memref.alloc() : memref<3xf64>
  memref.store %y, %d[%c0] : memref<3xf64>
  %s = memref.subview %d[1] [2] [1] : memref<3xf64> to memref<2xf64, strided<[1], offset: 1>>
  %v = memref.load %s[%c0] : memref<2xf64, strided<[1], offset: 1>>
  memref.dealloc %d : memref<3xf64>
  func.return %v : f64
}

// CHECK-LABEL: func.func @dynamic_index(
// CHECK:         %d = memref.alloc() : memref<3xf64>
// CHECK:         memref.load %d[%i] : memref<3xf64>
func.func @dynamic_index(%y: f64, %i: index) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %d = memref.alloc() : memref<3xf64>
  memref.store %y, %d[%c0] : memref<3xf64>
  memref.store %y, %d[%c1] : memref<3xf64>
  memref.store %y, %d[%c2] : memref<3xf64>
  %v = memref.load %d[%i] : memref<3xf64>
  memref.dealloc %d : memref<3xf64>
  func.return %v : f64
}

// Its bounds check must still fail at run time (IndexError).
// CHECK-LABEL: func.func @out_of_bounds(
// CHECK:         %d = memref.alloc() : memref<3xf64>
// CHECK:         memref.load %d[%c3] : memref<3xf64>
func.func @out_of_bounds(%y: f64) -> f64 {
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %d = memref.alloc() : memref<3xf64>
  memref.store %y, %d[%c0] : memref<3xf64>
  %v = memref.load %d[%c3] : memref<3xf64>
  memref.dealloc %d : memref<3xf64>
  func.return %v : f64
}

// np.empty(2) read where nothing was stored: left as the program wrote it.
// CHECK-LABEL: func.func @uninitialised(
// CHECK:         %d = memref.alloc() : memref<2xf64>
// CHECK:         memref.load %d[%c1] : memref<2xf64>
func.func @uninitialised(%y: f64) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %d = memref.alloc() : memref<2xf64>
  memref.store %y, %d[%c0] : memref<2xf64>
  %v = memref.load %d[%c1] : memref<2xf64>
  memref.dealloc %d : memref<2xf64>
  func.return %v : f64
}

// Stored under a while loop: no region op but scf.for/scf.if carries values.
// CHECK-LABEL: func.func @in_while(
// CHECK:         %d = memref.alloc() : memref<1xf64>
// CHECK:         scf.while
// CHECK:           memref.store %h, %d[%c0] : memref<1xf64>
func.func @in_while(%y: f64) -> f64 {
  %c0 = arith.constant 0 : index
  %one = arith.constant 1.0 : f64
  %half = arith.constant 0.5 : f64
  %d = memref.alloc() : memref<1xf64>
  memref.store %y, %d[%c0] : memref<1xf64>
  %r = scf.while (%v = %y) : (f64) -> f64 {
    %c = arith.cmpf ogt, %v, %one : f64
    scf.condition(%c) %v : f64
  } do {
  ^bb0(%w: f64):
    %h = arith.mulf %w, %half : f64
    memref.store %h, %d[%c0] : memref<1xf64>
    scf.yield %h : f64
  }
  %v = memref.load %d[%c0] : memref<1xf64>
  memref.dealloc %d : memref<1xf64>
  func.return %v : f64
}

// A loop of 40 trips indexing d[k mod 2] would unroll to more than 256 ops
// with unroll-limit=20 and also by default (40 x 8 > 256): it stays a loop,
// and so the array stays.
// CHECK-LABEL: func.func @long_loop(
// CHECK:         %d = memref.alloc() : memref<2xf64>
// CHECK:         scf.for %k = %c0 to %c40 step %c1 {
func.func @long_loop(%x: memref<40xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c40 = arith.constant 40 : index
  %z = arith.constant 0.0 : f64
  %d = memref.alloc() : memref<2xf64>
  memref.store %z, %d[%c0] : memref<2xf64>
  memref.store %z, %d[%c1] : memref<2xf64>
  scf.for %k = %c0 to %c40 step %c1 {
    %slot = arith.remsi %k, %c2 : index
    %old = memref.load %d[%slot] : memref<2xf64>
    %v = memref.load %x[%k] : memref<40xf64>
    %w = arith.mulf %v, %v : f64
    %s = arith.addf %old, %w : f64
    %t = arith.addf %s, %v : f64
    memref.store %t, %d[%slot] : memref<2xf64>
  }
  %r = memref.load %d[%c0] : memref<2xf64>
  memref.dealloc %d : memref<2xf64>
  func.return %r : f64
}

// A loop with constant bounds that indexes no small array is not unrolled.
// CHECK-LABEL: func.func @no_small_array(
// CHECK:         scf.for %k = %c0 to %c3 step %c1
func.func @no_small_array(%x: memref<3xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %z = arith.constant 0.0 : f64
  %s = scf.for %k = %c0 to %c3 step %c1 iter_args(%acc = %z) -> (f64) {
    %v = memref.load %x[%k] : memref<3xf64>
    %n = arith.addf %acc, %v : f64
    scf.yield %n : f64
  }
  func.return %s : f64
}

// Only the reverse pipeline's copy (marked ad.gradient_of) with marked-only.
// MARKED-LABEL: func.func @copy(
// MARKED-NOT:     memref.alloc
// MARKED:         func.return
func.func @copy(%y: f64) -> f64 attributes {ad.gradient_of = {primal = @pair, activity = ["active"], ret_activity = ["active"]}} {
  %c0 = arith.constant 0 : index
  %d = memref.alloc() : memref<1xf64>
  memref.store %y, %d[%c0] : memref<1xf64>
  %v = memref.load %d[%c0] : memref<1xf64>
  memref.dealloc %d : memref<1xf64>
  func.return %v : f64
}
