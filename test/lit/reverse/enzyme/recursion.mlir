// Enzyme-MLIR ReverseMode/recursion.mlir: mutually recursive @f and @g.
// Enzyme threads an opaque tape through per-call-frame rule functions;
// adpasses differentiates a recursive call that is checkpointed
// (`ad.checkpoint`): the forward sweep calls the primal, the reverse sweep
// calls the callee's gradient, so the gradient recurses as the primal does
// (each frame recomputes its callee's forward: O(depth^2) work, O(depth)
// stack). An unmarked recursive call is an error at the call.
// RUN: ad-opt %s --reverse | filecheck %s --check-prefix=IR
// RUN: ad-run %s | filecheck %s
// RUN: not ad-opt %S/Inputs/recursion_unmarked.mlir --reverse 2>&1 | filecheck %s --check-prefix=ERR

// Enzyme's own pair (no base case: it never returns when run, so only its
// IR is checked): the gradient of @f inlines @g, whose checkpointed call of
// @f becomes, in the reverse sweep, a call of @f's gradient itself.
// IR-LABEL: func.func @f_grad_a_a(%arg0: f32, %seed: f32) -> f32
// IR:         func.call @f(%arg0) {ad.checkpoint} : (f32) -> f32
// IR:         %[[D:.*]] = func.call @f_grad_a_a(%arg0, %seed) : (f32, f32) -> f32
// IR:         func.return %[[D]] : f32

// With base cases. pow_rec(x, n) = n == 0 ? 1 : pow_rec(x, n - 1) * x = x^n:
// d/dx = n x^(n-1); at x = 1.5: n = 4 gives 13.5, n = 0 gives 0.
// IR-LABEL: func.func @pow_rec_grad_ac_a(
// IR:         func.call @pow_rec(%x, %m) {ad.checkpoint}
// IR:         func.call @pow_rec_grad_ac_a(%x, %{{.*}}, %{{.*}}) : (f64, index, f64) -> f64
// s(x, n) = n == 0 ? x : sin(t(x, n - 1)), t(x, n) = x * s(x, n): mutual
// recursion. By hand, with s_n = s(x, n): s_n = sin(x s_{n-1}),
// s_n' = cos(x s_{n-1}) (s_{n-1} + x s_{n-1}'), s_0 = x, s_0' = 1;
// at x = 0.6, n = 3: s = 0.125544406736618, s' = 0.80534211371933.
// CHECK: pow_rec 13.5 0
// CHECK-NEXT: mutual 0.125544 0.805342

// ERR: recursion_unmarked.mlir:{{[0-9]+}}:{{[0-9]+}}: error: 'func.call': recursive call (pow_rec -> pow_rec) cannot be inlined for differentiation: mark it {ad.checkpoint} (its reverse calls the callee's gradient, one call frame at a time) or rewrite the recursion as a loop
// ERR-NOT: Traceback

func.func @f(%arg0: f32) -> f32 {
  %0 = func.call @g(%arg0) : (f32) -> f32
  func.return %0 : f32
}

func.func @g(%arg0: f32) -> f32 {
  %0 = func.call @f(%arg0) {ad.checkpoint} : (f32) -> f32
  func.return %0 : f32
}

func.func @f_rev(%x: f32, %dr: f32) -> f32 {
  %d = ad.autodiff @f(%x, %dr) {activity = [active], ret_activity = [active]} : (f32, f32) -> f32
  func.return %d : f32
}

func.func @pow_rec(%x: f64, %n: index) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1.0 : f64
  %done = arith.cmpi eq, %n, %c0 : index
  %r = scf.if %done -> (f64) {
    scf.yield %one : f64
  } else {
    %m = arith.subi %n, %c1 : index
    %p = func.call @pow_rec(%x, %m) {ad.checkpoint} : (f64, index) -> f64
    %q = arith.mulf %p, %x : f64
    scf.yield %q : f64
  }
  func.return %r : f64
}

func.func @s(%x: f64, %n: index) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %done = arith.cmpi eq, %n, %c0 : index
  %r = scf.if %done -> (f64) {
    scf.yield %x : f64
  } else {
    %m = arith.subi %n, %c1 : index
    %v = func.call @t(%x, %m) : (f64, index) -> f64
    %w = math.sin %v : f64
    scf.yield %w : f64
  }
  func.return %r : f64
}

func.func @t(%x: f64, %n: index) -> f64 {
  %v = func.call @s(%x, %n) {ad.checkpoint} : (f64, index) -> f64
  %w = arith.mulf %x, %v : f64
  func.return %w : f64
}

func.func @main() {
  %x = arith.constant 1.5 : f64
  %n4 = arith.constant 4 : index
  %n0 = arith.constant 0 : index
  %one = arith.constant 1.0 : f64
  %a = ad.autodiff @pow_rec(%x, %n4, %one) {activity = [active, const], ret_activity = [active]} : (f64, index, f64) -> f64
  %b = ad.autodiff @pow_rec(%x, %n0, %one) {activity = [active, const], ret_activity = [active]} : (f64, index, f64) -> f64
  printf.print_format "pow_rec {} {}\n", %a : f64, %b : f64
  %y = arith.constant 0.6 : f64
  %n3 = arith.constant 3 : index
  %sv, %ds = ad.autodiff @s(%y, %n3, %one) {activity = [active, const], ret_activity = [active], with_primal} : (f64, index, f64) -> (f64, f64)
  printf.print_format "mutual {} {}\n", %sv : f64, %ds : f64
  func.return
}
