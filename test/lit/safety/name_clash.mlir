// RUN: ad-run %s | filecheck %s
// RUN: ad-opt %s --reverse --emit=llvm-ir | filecheck %s --check-prefix=IR
// RUN: ad-opt %s --reverse --emit=llvm-ir | filecheck %s --check-prefix=DECL
// RUN: not ad-run %S/Inputs/declare_reserved.mlir 2>&1 | filecheck %s --check-prefix=RESERVED
//
// User symbols named like C library, CPython, runtime or internal symbols
// (docs/safety.md, "Names"): each is `u.<name>` in LLVM, so @atan's
// math.atan calls libm's atan, not itself, and the gradient of @exp2
// returns. A declaration keeps its C name, outside the reserved prefixes.

// RESERVED: {{^}}{{.*}}declare_reserved.mlir:1:1: error: 'func.func': declares '@__adpasses_oob', a name reserved for adpasses' runtime and generated code; rename the declaration{{$}}

// IR-LABEL: define double @"u.atan"(double %"x")
// IR:         call double @"atan"(double %"x")
// IR-LABEL: define double @"u.exp2"(double %"x")
// IR:         call double @"llvm.exp2.f64"(double %"x")
// IR-LABEL: define i64 @"u.malloc"(i64 %"n")
// IR:         call ptr @"__adpasses_alloc"
// IR-LABEL: define double @"u.adpasses_error_slot"(double %"x")
// IR-LABEL: define double @"u.__py_entry_main"(double %"x")
// IR:         call double @"cos"(double %"x")
// IR-LABEL: define void @"u.main"()
// IR:         call double @"u.atan"(double 0x3fe3333333333333)
// IR:         call i32 (ptr, ...) @"printf"(
// DECL-DAG: declare double @"atan"(double
// DECL-DAG: declare ptr @"malloc"(i64
// DECL-DAG: declare double @"cos"(double
// DECL-DAG: @"adpasses_error_pending" = external global i64
// DECL-DAG: declare void @"adpasses_record_stop"(i64

func.func private @cos(f64) -> f64

func.func @atan(%x: f64) -> f64 {
  %r = math.atan %x : f64
  return %r : f64
}

func.func @exp2(%x: f64) -> f64 {
  %y = math.exp2 %x : f64
  return %y : f64
}

func.func @malloc(%n: i64) -> i64 {
  %c0 = arith.constant 0 : index
  %k = arith.index_cast %n : i64 to index
  // A select chooses between two arrays: they escape ad-promote-scratch and
  // are heap arrays, through the runtime's counting malloc.
  %a = memref.alloc(%k) : memref<?xi64>
  %b = memref.alloc(%k) : memref<?xi64>
  %zero = arith.constant 0 : i64
  %pos = arith.cmpi sgt, %n, %zero : i64
  %m = arith.select %pos, %a, %b : memref<?xi64>
  memref.store %n, %m[%c0] : memref<?xi64>
  %v = memref.load %m[%c0] : memref<?xi64>
  memref.dealloc %a : memref<?xi64>
  memref.dealloc %b : memref<?xi64>
  %r = arith.addi %v, %n : i64
  return %r : i64
}

func.func @adpasses_error_slot(%x: f64) -> f64 {
  %r = arith.mulf %x, %x : f64
  return %r : f64
}

func.func @__py_entry_main(%x: f64) -> f64 {
  %r = func.call @cos(%x) : (f64) -> f64
  return %r : f64
}

func.func @main() {
  %x = arith.constant 0.6 : f64
  %one = arith.constant 1.0 : f64
  %n = arith.constant 21 : i64
  // CHECK: atan(0.6) = 0.54042
  %a = func.call @atan(%x) : (f64) -> f64
  printf.print_format "atan(0.6) = {}\n", %a : f64
  // CHECK-NEXT: d exp2(0.6) = 1.05061
  %d = ad.autodiff @exp2(%x, %one) {activity = [active], ret_activity = [active]} : (f64, f64) -> f64
  printf.print_format "d exp2(0.6) = {}\n", %d : f64
  // CHECK-NEXT: 42 0.36 0.825336
  %m = func.call @malloc(%n) : (i64) -> i64
  %s = func.call @adpasses_error_slot(%x) : (f64) -> f64
  %c = func.call @__py_entry_main(%x) : (f64) -> f64
  printf.print_format "{} {} {}\n", %m : i64, %s : f64, %c : f64
  return
}
