// Enzyme-MLIR ReverseMode/func.mlir: calls of a squaring function and of one
// whose results are constants (one float, one integer), summed. Enzyme
// turns each callee into a rule pair; adpasses inlines the callees into the
// gradient (--reverse-wrap, as Enzyme's --enzyme-wrap).
// Hand derivation: main(x) = x^2 + 42, d/dx = 2x: at x = 1.25 (f32): 2.5;
// at x = -4: -8.
// RUN: ad-opt %s --reverse-wrap="fn=main name=dmain" | filecheck %s --check-prefix=IR
// RUN: ad-opt %s --reverse-wrap="fn=main name=dmain" | ad-run --entry run | filecheck %s

// The constant callee contributes nothing: one product, doubled.
// IR-LABEL: func.func @main_grad_a_a(%arg0: f32, %seed: f32) -> f32
// IR-NEXT:    %[[M:.*]] = arith.mulf %seed, %arg0 : f32
// IR-NEXT:    %[[D:.*]] = arith.addf %[[M]], %[[M]] : f32
// IR-NEXT:    func.return %[[D]] : f32
// CHECK: dmain 2.5 -8

func.func @square(%arg0: f32) -> f32 {
  %0 = arith.mulf %arg0, %arg0 : f32
  func.return %0 : f32
}

func.func @inactive(%arg0: f32, %arg1: i32) -> (f32, i32) {
  %0 = arith.constant 42.0 : f32
  %1 = arith.constant 42 : i32
  func.return %0, %1 : f32, i32
}

func.func @main(%arg0: f32) -> f32 {
  %0 = func.call @square(%arg0) : (f32) -> f32
  %1 = arith.constant 10 : i32
  %2:2 = func.call @inactive(%arg0, %1) : (f32, i32) -> (f32, i32)
  %3 = arith.addf %0, %2#0 : f32
  func.return %3 : f32
}

func.func private @dmain(f32, f32) -> f32

func.func @run() {
  %x = arith.constant 1.25 : f32
  %y = arith.constant -4.0 : f32
  %one = arith.constant 1.0 : f32
  %a = func.call @dmain(%x, %one) : (f32, f32) -> f32
  %b = func.call @dmain(%y, %one) : (f32, f32) -> f32
  printf.print_format "dmain {} {}\n", %a : f32, %b : f32
  func.return
}
