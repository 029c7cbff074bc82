// RUN: ad-run %s | filecheck %s
// RUN: ad-opt %s --emit=llvm-ir | filecheck %s --check-prefix=IR
// RUN: not ad-run %S/Inputs/alloc_negative.mlir 2>&1 | filecheck %s --check-prefix=NEG
// RUN: not ad-run --opt-level 0 %S/Inputs/alloc_negative.mlir 2>&1 | filecheck %s --check-prefix=NEG
// RUN: not ad-run %S/Inputs/alloc_bytes_wrap.mlir 2>&1 | filecheck %s --check-prefix=WRAP
// RUN: not ad-run %S/Inputs/alloc_impossible.mlir 2>&1 | filecheck %s --check-prefix=NOMEM
// RUN: not ad-run --opt-level 0 %S/Inputs/alloc_impossible.mlir 2>&1 | filecheck %s --check-prefix=NOMEM
// RUN: not ad-run %S/Inputs/alloc_static_product.mlir 2>&1 | filecheck %s --check-prefix=PRODUCT
// RUN: not ad-run %S/Inputs/tape_capacity_wraps.mlir 2>&1 | filecheck %s --check-prefix=TAPE
// RUN: not ad-run %S/Inputs/alloca_budget.mlir 2>&1 | filecheck %s --check-prefix=STACK
// RUN: not ad-run %S/Inputs/alloca_static_too_large.mlir 2>&1 | filecheck %s --check-prefix=STATIC
// RUN: not ad-run %S/Inputs/loop_step_zero.mlir 2>&1 | filecheck %s --check-prefix=STEP
//
// Every allocation checks its size (docs/safety.md, "Allocation sizes"):
// the stops are one line `file:line:col: error: Kind: ...` and exit 1, at
// every optimisation level (LLVM may not delete a failing malloc).

// NEG: {{^}}{{.*}}alloc_negative.mlir:6:3: error: ValueError: negative dimensions are not allowed: an allocation was asked for size -5 in dimension 0{{$}}
// NEG-NOT: stored
// WRAP: {{^}}{{.*}}alloc_bytes_wrap.mlir:6:3: error: MemoryError: cannot allocate an array: 4611686018427387904 elements of 8 bytes need more than 2**63 - 1 bytes
// NOMEM: {{^}}{{.*}}alloc_impossible.mlir:5:3: error: MemoryError: unable to allocate 2.00 EiB (288230376151711744 elements of 8 bytes) for an array: out of memory{{$}}
// PRODUCT: {{^}}{{.*}}alloc_static_product.mlir:5:3: error: MemoryError: cannot allocate an array: more than 2**64 elements of 8 bytes
// PRODUCT-NOT: stored
// TAPE: {{^}}{{.*}}tape_capacity_wraps.mlir:6:3: error: MemoryError: cannot allocate the tape of a loop (values the reverse sweep reads back): 2305843009213693952 elements of 8 bytes
// TAPE-NOT: done
// STACK: {{^}}{{.*}}alloca_budget.mlir:9:5: error: MemoryError: a stack allocation (memref.alloca) of 64.00 KiB would exceed the limit of 1.00 MiB of stack memory per call
// STATIC: {{^}}{{.*}}alloca_static_too_large.mlir:3:3: error: 'memref.alloca': allocates 8000000 bytes on the stack, more than the limit of 1048576 bytes
// STEP: {{^}}{{.*}}loop_step_zero.mlir:5:3: error: ValueError: scf.for step must be positive, got 0

// The checked code: a negative test per dynamic size, an overflow-checked
// product, a NULL test after the allocation.
// IR-LABEL: define double @"u.alloc2d"(i64 %"n", i64 %"m")
// IR:         icmp slt i64 %"n", 0
// IR:         call void @"__adpasses_oob"(i64 [[SITE:[0-9]+]], i64 %"n", i64 -1099511627777, i64 0)
// IR:         icmp slt i64 %"m", 0
// IR:         call void @"__adpasses_oob"(i64 [[SITE]], i64 %"m", i64 -1099511627777, i64 1)
// IR:         call {i64, i1} @"llvm.umul.with.overflow.i64"(i64 %"n", i64 %"m")
// IR:         call {i64, i1} @"llvm.umul.with.overflow.i64"(i64 {{%".*"}}, i64 8)
// IR:         call void @"__adpasses_oob"(i64 [[SITE]], i64 {{%".*"}}, i64 -1099511627778, i64 8)
// The local array does not escape: a workspace (ad-promote-scratch), grown
// by a checked realloc when the pooled buffer is too small.
// IR:         call void @"adpasses_workspace_take"
// IR:         [[P:%".*"]] = call ptr @"__adpasses_realloc"(ptr {{%".*"}}, i64 [[BYTES:%".*"]])
// IR-NEXT:    icmp eq ptr [[P]], null
// IR:         call void @"__adpasses_oob"(i64 [[SITE]], i64 [[BYTES]], i64 -1099511627779, i64 8)
// A returned array is malloc'd, with the same checks.
// IR-LABEL: define {{.*}} @"u.fresh"(i64 %"n")
// IR:         icmp slt i64 %"n", 0
// IR:         [[F:%".*"]] = call ptr @"__adpasses_alloc"(i64 [[FBYTES:%".*"]])
// IR-NEXT:    icmp eq ptr [[F]], null
// IR:         call void @"__adpasses_oob"(i64 {{[0-9]+}}, i64 [[FBYTES]], i64 -1099511627779, i64 8)
// A growable tape doubles its capacity, saturated, and checks the realloc.
// IR-LABEL: define void @"u.grow"(i64 %"n")
// IR:         call {i64, i1} @"llvm.umul.with.overflow.i64"(i64 {{%".*"}}, i64 2)
// IR:         call {i64, i1} @"llvm.umul.with.overflow.i64"(i64 {{%".*"}}, i64 8)
// IR:         [[G:%".*"]] = call ptr @"__adpasses_realloc"
// IR-NEXT:    icmp eq ptr [[G]], null
// IR:         call void @"__adpasses_oob"(i64 {{[0-9]+}}, i64 {{%".*"}}, i64 -1099511627779, i64 65544)
// A dynamic alloca counts against the call's stack budget.
// IR-LABEL: define double @"u.stack"(i64 %"n")
// IR:         icmp ugt i64 {{%".*"}}, 1048576
// IR:         call void @"__adpasses_oob"(i64 {{[0-9]+}}, i64 {{%".*"}}, i64 -1099511627780, i64 1048576)
// IR:         alloca double, i64 %"n"

func.func @alloc2d(%n: index, %m: index) -> f64 {
  %c0 = arith.constant 0 : index
  %x = memref.alloc(%n, %m) : memref<?x?xf64>
  %one = arith.constant 1.0 : f64
  memref.store %one, %x[%c0, %c0] : memref<?x?xf64>
  %v = memref.load %x[%c0, %c0] : memref<?x?xf64>
  memref.dealloc %x : memref<?x?xf64>
  func.return %v : f64
}

func.func @fresh(%n: index) -> memref<?xf64> {
  %x = memref.alloc(%n) : memref<?xf64>
  func.return %x : memref<?xf64>
}

func.func @grow(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %t = ad.tape.create : !ad.tape<f64>
  %z = arith.constant 2.0 : f64
  scf.for %i = %c0 to %n step %c1 {
    ad.tape.push %z, %t : f64, !ad.tape<f64>
  }
  ad.tape.free %t : !ad.tape<f64>
  func.return
}

func.func @stack(%n: index) -> f64 {
  %c0 = arith.constant 0 : index
  %a = memref.alloca(%n) : memref<?xf64>
  %one = arith.constant 1.0 : f64
  memref.store %one, %a[%c0] : memref<?xf64>
  %v = memref.load %a[%c0] : memref<?xf64>
  func.return %v : f64
}

func.func @main() {
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %c200 = arith.constant 200 : index
  // Sizes that fit run as before; an empty allocation is fine.
  // CHECK: 1 1
  %a = func.call @alloc2d(%c3, %c3) : (index, index) -> f64
  %b = func.call @stack(%c3) : (index) -> f64
  printf.print_format "{} {}\n", %a : f64, %b : f64
  func.call @grow(%c200) : (index) -> ()
  %e = memref.alloc(%c0) : memref<?xf64>
  memref.dealloc %e : memref<?xf64>
  // CHECK-NEXT: done
  printf.print_format "done\n"
  func.return
}
