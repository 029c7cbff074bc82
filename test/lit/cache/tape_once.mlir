// RUN: ad-opt %s --reverse --print-cache-report 2>&1 >/dev/null | filecheck %s
// RUN: ad-opt %s --reverse 2>/dev/null | filecheck %s --check-prefix=IR
// Tape once (issue 18, item 4; docs/cache.md, "Tape once"): a value stored
// to memory and loaded back later is taped at most once.

// The MLP's hidden layer: h[j] = tanh(t) in one loop, h[k] read back in the
// next, h overwritten in the next row. The load is taped (h changes later);
// the tanh result, which its derivative needs, is not taped again: the
// reverse of the load writes what it pops into a mirror of h, and the
// reverse of the first loop reads it there (`shared`).
// CHECK-LABEL: cache report for @hidden_grad_ddd_a
// CHECK-DAG:     shared    %th {{.*}}math.tanh: stored at {{.*}}tape_once.mlir:[[STORE:[0-9]+]]:7 and read back by the load at {{.*}}tape_once.mlir:{{[0-9]+}}:7, which is taped: taped once, there; the reverse of that load writes it into a mirror of %h, read here
// CHECK-DAG:     tape      %hk {{.*}}f64 x dim(x, 0) * dim(w, 0) {{.*}}memref.load: overwritten later: {{.*}}; also gives %th stored at {{.*}}tape_once.mlir:[[STORE]]:7 (tape once)
// CHECK-NOT:   {{^  tape }}
// CHECK:         taped bytes: 8*(dim(x, 0))*(dim(w, 0)){{$}}

// IR-LABEL:  func.func @hidden_grad_ddd_a
// IR:          %th = math.tanh %t : f64
// IR-NEXT:     memref.store %th, %h[%j] {ad.twin_id = {{[0-9]+}} : i64} : memref<?xf64>
// IR-NEXT:     }
// IR-NEXT:     scf.for
// IR-NEXT:     %hk = memref.load %h[%k]
// IR-NEXT:     memref.load
// IR-NEXT:     memref.store %hk, %tape_hk
// IR:          %h_mirror = memref.alloc(%{{.*}}) {ad.workspace} : memref<?xf64>
// IR:          %[[HK:.*]] = memref.load %tape_hk[%{{.*}}] {ad.unchecked} : memref<?xf64>
// IR-NEXT:     memref.store %[[HK]], %h_mirror[%[[K:.*]]] {ad.twin_of = {{[0-9]+}} : i64, ad.unchecked} : memref<?xf64>
// IR:          %[[TH:.*]] = memref.load %h_mirror[%[[J:.*]]] {ad.twin_of = {{[0-9]+}} : i64, ad.unchecked} : memref<?xf64>
// IR:          arith.mulf %[[TH]], %[[TH]] : f64
// IR:          memref.dealloc %h_mirror {ad.workspace} : memref<?xf64>
// IR-NEXT:     func.return

func.func @hidden(%x: memref<?x?xf64>, %w: memref<?xf64>, %v: memref<?xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f64
  %nb = memref.dim %x, %c0 : memref<?x?xf64>
  %nh = memref.dim %w, %c0 : memref<?xf64>
  %h = memref.alloc(%nh) : memref<?xf64>
  %r = scf.for %b = %c0 to %nb step %c1 iter_args(%acc = %z) -> (f64) {
    scf.for %j = %c0 to %nh step %c1 {
      %a = memref.load %x[%b, %j] : memref<?x?xf64>
      %wj = memref.load %w[%j] : memref<?xf64>
      %t = arith.mulf %a, %wj : f64
      %th = math.tanh %t : f64
      memref.store %th, %h[%j] : memref<?xf64>
    }
    %o = scf.for %k = %c0 to %nh step %c1 iter_args(%oa = %z) -> (f64) {
      %hk = memref.load %h[%k] : memref<?xf64>
      %vk = memref.load %v[%k] : memref<?xf64>
      %p = arith.mulf %hk, %vk : f64
      %s = arith.addf %oa, %p : f64
      scf.yield %s : f64
    }
    %acc2 = arith.addf %acc, %o : f64
    scf.yield %acc2 : f64
  }
  memref.dealloc %h : memref<?xf64>
  func.return %r : f64
}

// Stored once and never overwritten: the tanh result is loaded back from
// the element its store wrote (`reload`), nothing is taped.
// CHECK-LABEL: cache report for @stored_once_grad_dd_a
// CHECK-DAG:     reload    %th {{.*}}math.tanh: stored at {{.*}}tape_once.mlir:{{[0-9]+}}:5, where no later write may overwrite it (alias analysis): loaded back from there; dealloc at {{.*}}: deferred until after the reverse sweep
// CHECK-DAG:     reload    %yi {{.*}}memref.load: no later write may overwrite it (alias analysis)
// CHECK-NOT:   {{^  tape }}
// CHECK:         taped bytes: 0

// IR-LABEL:  func.func @stored_once_grad_dd_a
// IR-NOT:      ad.tape
// IR:          func.return

func.func @stored_once(%x: memref<?xf64>, %c: memref<?xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f64
  %n = memref.dim %x, %c0 : memref<?xf64>
  %y = memref.alloc(%n) : memref<?xf64>
  scf.for %i = %c0 to %n step %c1 {
    %a = memref.load %x[%i] : memref<?xf64>
    %th = math.tanh %a : f64
    memref.store %th, %y[%i] : memref<?xf64>
  }
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (f64) {
    %yi = memref.load %y[%i] : memref<?xf64>
    %ci = memref.load %c[%i] : memref<?xf64>
    %p = arith.mulf %yi, %ci : f64
    %s = arith.addf %acc, %p : f64
    scf.yield %s : f64
  }
  memref.dealloc %y : memref<?xf64>
  func.return %r : f64
}

// Not proven, taped twice: h is written between the store and the load
// (the load reads 0, not the tanh), ...
// CHECK-LABEL: cache report for @written_between_grad_ddd_a
// CHECK-DAG:     tape      %th {{.*}}math.tanh: cost model:
// CHECK-DAG:     tape      %hk {{.*}}memref.load: overwritten later:
// CHECK-NOT:     shared
// CHECK:         taped bytes:

func.func @written_between(%x: memref<?x?xf64>, %w: memref<?xf64>, %v: memref<?xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f64
  %nb = memref.dim %x, %c0 : memref<?x?xf64>
  %nh = memref.dim %w, %c0 : memref<?xf64>
  %h = memref.alloc(%nh) : memref<?xf64>
  %r = scf.for %b = %c0 to %nb step %c1 iter_args(%acc = %z) -> (f64) {
    scf.for %j = %c0 to %nh step %c1 {
      %a = memref.load %x[%b, %j] : memref<?x?xf64>
      %wj = memref.load %w[%j] : memref<?xf64>
      %t = arith.mulf %a, %wj : f64
      %th = math.tanh %t : f64
      memref.store %th, %h[%j] : memref<?xf64>
    }
    memref.store %z, %h[%c0] : memref<?xf64>
    %o = scf.for %k = %c0 to %nh step %c1 iter_args(%oa = %z) -> (f64) {
      %hk = memref.load %h[%k] : memref<?xf64>
      %vk = memref.load %v[%k] : memref<?xf64>
      %p = arith.mulf %hk, %vk : f64
      %s = arith.addf %oa, %p : f64
      scf.yield %s : f64
    }
    %acc2 = arith.addf %acc, %o : f64
    scf.yield %acc2 : f64
  }
  memref.dealloc %h : memref<?xf64>
  func.return %r : f64
}

// ... the store runs only in some iterations (an scf.if), ...
// CHECK-LABEL: cache report for @stored_if_grad_ddd_a
// CHECK-DAG:     tape      %th {{.*}}math.tanh: cost model:
// CHECK-DAG:     tape      %hk {{.*}}memref.load: overwritten later:
// CHECK-NOT:     shared
// CHECK:         taped bytes:

func.func @stored_if(%x: memref<?x?xf64>, %w: memref<?xf64>, %v: memref<?xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f64
  %nb = memref.dim %x, %c0 : memref<?x?xf64>
  %nh = memref.dim %w, %c0 : memref<?xf64>
  %h = memref.alloc(%nh) : memref<?xf64>
  %r = scf.for %b = %c0 to %nb step %c1 iter_args(%acc = %z) -> (f64) {
    scf.for %j = %c0 to %nh step %c1 {
      %a = memref.load %x[%b, %j] : memref<?x?xf64>
      %wj = memref.load %w[%j] : memref<?xf64>
      %t = arith.mulf %a, %wj : f64
      %th = math.tanh %t : f64
      %pos = arith.cmpf ogt, %t, %z : f64
      scf.if %pos {
        memref.store %th, %h[%j] : memref<?xf64>
      }
    }
    %o = scf.for %k = %c0 to %nh step %c1 iter_args(%oa = %z) -> (f64) {
      %hk = memref.load %h[%k] : memref<?xf64>
      %vk = memref.load %v[%k] : memref<?xf64>
      %p = arith.mulf %hk, %vk : f64
      %s = arith.addf %oa, %p : f64
      scf.yield %s : f64
    }
    %acc2 = arith.addf %acc, %o : f64
    scf.yield %acc2 : f64
  }
  memref.dealloc %h : memref<?xf64>
  func.return %r : f64
}

// ... or the load reads another element than the store wrote (h[k + 1]).
// CHECK-LABEL: cache report for @other_element_grad_ddd_a
// CHECK-DAG:     tape      %th {{.*}}math.tanh: cost model:
// CHECK-DAG:     tape      %hk {{.*}}memref.load: overwritten later:
// CHECK-NOT:     shared
// CHECK:         taped bytes:

func.func @other_element(%x: memref<?x?xf64>, %w: memref<?xf64>, %v: memref<?xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f64
  %nb = memref.dim %x, %c0 : memref<?x?xf64>
  %nh = memref.dim %w, %c0 : memref<?xf64>
  %h = memref.alloc(%nh) : memref<?xf64>
  %nk = arith.subi %nh, %c1 : index
  %r = scf.for %b = %c0 to %nb step %c1 iter_args(%acc = %z) -> (f64) {
    scf.for %j = %c0 to %nh step %c1 {
      %a = memref.load %x[%b, %j] : memref<?x?xf64>
      %wj = memref.load %w[%j] : memref<?xf64>
      %t = arith.mulf %a, %wj : f64
      %th = math.tanh %t : f64
      memref.store %th, %h[%j] : memref<?xf64>
    }
    %o = scf.for %k = %c0 to %nk step %c1 iter_args(%oa = %z) -> (f64) {
      %k1 = arith.addi %k, %c1 : index
      %hk = memref.load %h[%k1] : memref<?xf64>
      %vk = memref.load %v[%k] : memref<?xf64>
      %p = arith.mulf %hk, %vk : f64
      %s = arith.addf %oa, %p : f64
      scf.yield %s : f64
    }
    %acc2 = arith.addf %acc, %o : f64
    scf.yield %acc2 : f64
  }
  memref.dealloc %h : memref<?xf64>
  func.return %r : f64
}

func.func @main(%x: memref<?x?xf64>, %dx: memref<?x?xf64>, %w: memref<?xf64>, %dw: memref<?xf64>,
                %v: memref<?xf64>, %dv: memref<?xf64>, %y: memref<?xf64>, %dy: memref<?xf64>, %s: f64) {
  ad.autodiff @hidden(%x, %dx, %w, %dw, %v, %dv, %s) {activity = [dup, dup, dup], ret_activity = [active]} : (memref<?x?xf64>, memref<?x?xf64>, memref<?xf64>, memref<?xf64>, memref<?xf64>, memref<?xf64>, f64) -> ()
  ad.autodiff @stored_once(%y, %dy, %v, %dv, %s) {activity = [dup, dup], ret_activity = [active]} : (memref<?xf64>, memref<?xf64>, memref<?xf64>, memref<?xf64>, f64) -> ()
  ad.autodiff @written_between(%x, %dx, %w, %dw, %v, %dv, %s) {activity = [dup, dup, dup], ret_activity = [active]} : (memref<?x?xf64>, memref<?x?xf64>, memref<?xf64>, memref<?xf64>, memref<?xf64>, memref<?xf64>, f64) -> ()
  ad.autodiff @stored_if(%x, %dx, %w, %dw, %v, %dv, %s) {activity = [dup, dup, dup], ret_activity = [active]} : (memref<?x?xf64>, memref<?x?xf64>, memref<?xf64>, memref<?xf64>, memref<?xf64>, memref<?xf64>, f64) -> ()
  ad.autodiff @other_element(%x, %dx, %w, %dw, %v, %dv, %s) {activity = [dup, dup, dup], ret_activity = [active]} : (memref<?x?xf64>, memref<?x?xf64>, memref<?xf64>, memref<?xf64>, memref<?xf64>, memref<?xf64>, f64) -> ()
  func.return
}
