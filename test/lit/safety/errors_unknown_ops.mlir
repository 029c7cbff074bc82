// Ops the reverse pass cannot see through, touching data that carries
// derivatives: one line at the op's location, naming it, what it touches and
// what to write instead; exit status 1. Each of these used to give a zero
// derivative (or no shadow update) with exit status 0.
// RUN: not ad-opt %S/Inputs/atomic_rmw.mlir --reverse 2>&1 | filecheck %s --check-prefix=RMW
// RUN: not ad-opt %S/Inputs/external_call.mlir --reverse 2>&1 | filecheck %s --check-prefix=CALL
// RUN: not ad-opt %S/Inputs/bitcast_xori.mlir --reverse 2>&1 | filecheck %s --check-prefix=XOR
// RUN: not ad-opt %S/Inputs/bits_through_memory.mlir --reverse --no-scalar-replace 2>&1 | filecheck %s --check-prefix=BITSMEM
// (By default ad-scalar-replace forwards the stored bits to the load: the
// round trip is then direct, and differentiated.)
// RUN: ad-opt %S/Inputs/bits_through_memory.mlir --reverse | filecheck %s --check-prefix=BITSDIRECT
// BITSDIRECT-LABEL: func.func @f_grad_a_a(
// BITSDIRECT-NEXT:    %i = arith.bitcast %x : f64 to i64
// BITSDIRECT-NEXT:    %y = arith.bitcast %i : i64 to f64
// BITSDIRECT-NEXT:    %0 = arith.mulf %seed, %y : f64
// BITSDIRECT-NEXT:    %1 = arith.addf %0, %0 : f64
// BITSDIRECT-NEXT:    func.return %1 : f64
// RUN: not ad-opt %S/Inputs/memref_through_if.mlir --reverse 2>&1 | filecheck %s --check-prefix=IFMEM
// RUN: not ad-opt %S/Inputs/select_const_memref.mlir --reverse 2>&1 | filecheck %s --check-prefix=SELCONST
// RUN: not ad-opt %S/Inputs/affine_vector_load.mlir --reverse 2>&1 | filecheck %s --check-prefix=AFFINE
// scf.parallel used to be one of them; it is now run as a scf.for nest
// (ad-expand-upstream-ops; numbers in test/lit/upstream/structured.mlir).
// RUN: ad-opt %S/Inputs/scf_parallel.mlir --reverse | filecheck %s --check-prefix=PAR
// Vectors of floats carry derivatives that no rule propagates: a vector op
// on active data used to give a zero derivative from ad-opt --reverse.
// RUN: not ad-opt %S/Inputs/vector_active.mlir --reverse 2>&1 | filecheck %s --check-prefix=VEC
// RUN: ad-opt %S/Inputs/vector_const.mlir --reverse | filecheck %s --check-prefix=VECCONST

// PAR-LABEL: func.func @f_grad_dd_(
// PAR-NOT: scf.parallel
// PAR: scf.for
// PAR: memref.store {{.*}}, %dx
// VEC: vector_active.mlir:2:3: error: 'vector.broadcast': is not understood by reverse mode {{.*}} but it touches the value %x, which carries a derivative
// VECCONST: func.func @f_grad_ac_a(
// VECCONST: vector.broadcast
// RMW: atomic_rmw.mlir:3:3: error: 'memref.atomic_rmw': is not understood by reverse mode {{.*}} but it touches the value %a, which carries a derivative
// CALL: external_call.mlir:4:3: error: 'func.call': calls '@fill', which has no body to differentiate, with the memref %x, whose memory carries derivatives; define it in the module or make its arguments const
// XOR: bitcast_xori.mlir:5:3: error: 'arith.bitcast': turns integer bits taken from a float that carries a derivative back into a float, but not as a direct round trip
// XOR-SAME: compute it with float ops (arith.negf, math.absf, math.copysign, ...) instead
// BITSMEM: bits_through_memory.mlir:7:3: error: 'arith.bitcast': turns integer bits taken from a float
// IFMEM: memref_through_if.mlir:2:3: error: an active memref that is not an argument, an allocation or a view of one (e.g. yielded from a loop or an if) is not supported by reverse mode; choose between memrefs with arith.select
// SELCONST: select_const_memref.mlir:2:3: error: memory of argument %b receives derivatives but has no shadow: declare it 'dup' (Duplicated) instead of 'const'
// AFFINE: affine_vector_load.mlir:3:3: error: 'affine.vector_load': is not supported by adpasses (only affine.for/parallel/if/load/store/apply/min/max/yield are lowered to scf); rewrite it with scf.for and memref.load/store
