// Enzyme-MLIR ReverseMode/func_call_write.mlir: a callee stores its float
// argument into a rank-0 memref and loads it back (asked for as with
// --enzyme-wrap: dup, active -> active).
// Hand derivation: main(a, b) = b, and a's final contents are b. The
// shadow of a on entry seeds a's final contents, so db = dr + da_in, and
// the store consumes the shadow: da_out = 0. At da_in = 0.5, dr = 2:
// db = 2.5, da = 0; the primal a[] ends as b = 3.
// RUN: ad-opt %s --reverse-wrap="fn=main activities=dup,active rets=active name=dmain" | filecheck %s --check-prefix=IR
// RUN: ad-opt %s --reverse-wrap="fn=main activities=dup,active rets=active name=dmain" | ad-run --entry run | filecheck %s

// @f is inlined into the gradient; the reverse reads and zeroes da[].
// IR-LABEL: func.func @main_grad_da_a(%a: memref<f32>, %da: memref<f32>, %b: f32, %seed: f32) -> f32
// IR-NOT:     func.call
// IR:         memref.store %{{.*}}, %da[]
// IR:         func.return
// CHECK: db 2.5 da 0 a 3

func.func @main(%a: memref<f32>, %b: f32) -> f32 {
  %0 = func.call @f(%a, %b) : (memref<f32>, f32) -> f32
  func.return %0 : f32
}

func.func @f(%a: memref<f32>, %b: f32) -> f32 {
  memref.store %b, %a[] : memref<f32>
  %0 = memref.load %a[] : memref<f32>
  func.return %0 : f32
}

func.func private @dmain(memref<f32>, memref<f32>, f32, f32) -> f32

func.func @run() {
  %a = memref.alloc() : memref<f32>
  %da = memref.alloc() : memref<f32>
  %z = arith.constant 1.0 : f32
  %h = arith.constant 0.5 : f32
  %b = arith.constant 3.0 : f32
  %dr = arith.constant 2.0 : f32
  memref.store %z, %a[] : memref<f32>
  memref.store %h, %da[] : memref<f32>
  %db = func.call @dmain(%a, %da, %b, %dr) : (memref<f32>, memref<f32>, f32, f32) -> f32
  %g = memref.load %da[] : memref<f32>
  %v = memref.load %a[] : memref<f32>
  printf.print_format "db {} da {} a {}\n", %db : f32, %g : f32, %v : f32
  memref.dealloc %a : memref<f32>
  memref.dealloc %da : memref<f32>
  func.return
}
