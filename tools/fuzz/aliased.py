"""The aliased-arguments mode of the fuzzer: `python -m adpasses.tools.fuzz --aliased`.

Each seed gives a small random Python function over 2-3 float arrays of one
length (and sometimes a float), which the frontend compiles, and calls it
through the Python API with arguments that share memory: the same array
twice, shifted, reversed and strided views of one buffer, interleaved
views that share no element, broadcast (stride-0) arrays, read-only or
writable. Every call must either match a reference or raise a ValueError
naming an argument:

- `jit`: results and final memory against the plain Python function run
  on a copy of the same aliased memory; a read-only array the function
  writes must be a ValueError.
- `grad` / `value_and_grad` (random argnums): the arguments are left
  unchanged, the value is the Python function's on a copy of the aliased
  memory, and each gradient is compared with central finite differences:
  with respect to the memory the argument covers when it is in a *written
  group* (it shares memory, transitively, with an array the function
  writes), else with respect to the argument alone (a perturbed copy, the
  others unchanged: one derivative per element of a broadcast array). A
  written array whose elements share memory must be a ValueError.
- `autodiff` (the arrays the function writes are Duplicated, others
  Duplicated or Const) with one of six shadow patterns: `mirrored` (the
  shadows are the same views of shadow buffers), `separate` (a fresh
  array each), `self` (`Duplicated(x, x)`), `other` (another argument as
  shadow), `shared` (one shadow for two arrays that share no memory) and
  `stride0` (a stride-0 shadow of an array with distinct elements).
  Whether the call is valid is decided from the construction (which
  arrays the program stores to, which elements each view reaches), not by
  asking adpasses: Enzyme's rule as docs/api.md states it. A valid call
  must leave in each shadow the derivative of the result with respect to
  the initial memory its array covers (mirrored) or to its array alone
  (separate), and in memory the Python function's final contents.

Outcome kinds: `missed error` (an invalid call returned), `needless error`
(a valid call raised ValueError), `wrong error` (another exception, or a
ValueError that names no argument), `changed argument` (grad modified an
argument), `wrong primal`, `wrong gradient`; a dying worker is a `crash`
(runner.py). The reference shares no code with adpasses' aliasing checks.
"""

from __future__ import annotations

import linecache
import math
import random
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from adpasses.tools.fuzz.check import Outcome

N = 7   # elements per array argument
K = 2   # the first loop runs to len - K, so indices i + 0..K are in bounds
PATTERNS = ("disjoint", "same", "shift", "reversed", "interleaved", "strided", "broadcast", "stride0")
SHADOW_MODES = ("mirrored", "separate", "self", "other", "shared", "stride0")


@dataclass(frozen=True)
class ViewSpec:
    """A rank-1 view of N elements of buffer `buffer`: elements
    offset + i * step (step 0: one element repeated)."""

    buffer: int
    offset: int
    step: int
    writeable: bool = True

    def elements(self) -> set[int]:
        return {self.offset + i * self.step for i in range(N)}

    def of(self, buffer: np.ndarray, writeable: bool | None = None) -> np.ndarray:
        """The view (`writeable` overrides the spec's flag: the reference
        always runs, also where the call must be rejected)."""
        item = buffer.itemsize
        return np.lib.stride_tricks.as_strided(buffer[self.offset:], (N,), (self.step * item,),
                                               writeable=self.writeable if writeable is None else writeable)


@dataclass
class AliasedCase:
    seed: int
    name: str
    source: str
    n_arrays: int
    has_scalar: bool
    written: frozenset[int]
    """Arrays the program stores to (by construction)."""
    buffer_sizes: list[int]
    views: list[ViewSpec]
    pattern: str
    argnums: tuple[int, ...]
    dup: frozenset[int]
    """Arrays autodiff passes as Duplicated (every written one among them)."""
    shadow_mode: str
    scalar: float = 0.7
    data_seed: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def params(self) -> list[str]:
        return [f"a{k}" for k in range(self.n_arrays)] + (["s"] if self.has_scalar else [])


# -- generation ---------------------------------------------------------------------------


def _expr(rng: random.Random, n_arrays: int, has_scalar: bool, depth: int, max_shift: int) -> str:
    if depth == 0 or rng.random() < 0.3:
        leaves = [f"a{rng.randrange(n_arrays)}[i + {rng.randint(0, max_shift)}]" for _ in range(3)]
        leaves += ["s"] * has_scalar + [repr(round(rng.uniform(-1, 1), 3))]
        return rng.choice(leaves).replace("[i + 0]", "[i]")
    a = _expr(rng, n_arrays, has_scalar, depth - 1, max_shift)
    b = _expr(rng, n_arrays, has_scalar, depth - 1, max_shift)
    return rng.choice([f"({a} + {b})", f"({a} * {b})", f"math.sin({a})", f"math.tanh({a})",
                       f"({a} - 0.5 * {b})"])


def _views(rng: random.Random, pattern: str, n_arrays: int, written: frozenset[int]) -> tuple[list[ViewSpec], list[int]]:
    """One view per array; the buffers they need."""
    plain = [ViewSpec(k, 0, 1) for k in range(n_arrays)]
    pair = rng.sample(range(n_arrays), 2)
    views = list(plain)
    a, b = pair
    if pattern == "same":
        views[b] = views[a]
    elif pattern == "shift":
        views[b] = ViewSpec(a, rng.randint(1, 3), 1)
    elif pattern == "reversed":
        views[b] = ViewSpec(a, N - 1 + rng.randint(0, 2), -1)
    elif pattern == "interleaved":
        views[a] = ViewSpec(a, 0, 2)
        views[b] = ViewSpec(a, 1, 2)
    elif pattern == "strided":
        views[a] = ViewSpec(a, 0, 2)
        views[b] = ViewSpec(a, rng.choice([1, 2, 3]), rng.choice([1, -1, 3]) or 1)
        if views[b].step < 0:
            views[b] = ViewSpec(a, views[b].offset + N - 1, -1)
    elif pattern in ("broadcast", "stride0"):
        # a broadcast array is read-only (np.broadcast_to); a stride-0
        # view may be writable (as_strided)
        readers = [k for k in range(n_arrays) if k not in written] or list(range(n_arrays))
        k = rng.choice(readers) if rng.random() < 0.8 else rng.randrange(n_arrays)
        views[k] = ViewSpec(k, rng.randint(0, 2), 0, writeable=pattern == "stride0")
    sizes = [0] * n_arrays
    for v in views:
        top = max(v.elements()) + 1 + rng.randint(0, 1)
        sizes[v.buffer] = max(sizes[v.buffer], top)
        assert min(v.elements()) >= 0
    return views, sizes


def _whole_array_update(seed: int, n_arrays: int, has_scalar: bool, written: frozenset[int]) -> list[str]:
    """Sometimes a whole-array update of a written array before the loop
    (`a0 += np.sin(a1[::-1]) * 0.5`): numpy reads the right side before
    writing, which the compiled code must do when the arrays share memory
    (a run-time overlap test: frontend/overlap.py). Drawn from its own
    stream, so the rest of a seed's case is what it was without it."""
    rng = random.Random(seed * 7919 + 17)
    if not written or rng.random() < 0.6:
        return []
    w = rng.choice(sorted(written))
    r, q = rng.randrange(n_arrays), rng.randrange(n_arrays)
    sources = [f"np.sin(a{r}) * 0.5", f"a{r}[::-1] * 0.3", f"0.5 * a{r} * a{q}", f"np.tanh(a{r} - a{q})"]
    if has_scalar:
        sources.append(f"a{r} * s")
    op = rng.choice(["+", "-", "*"])
    value = rng.choice(sources)
    return [f"    a{w} {op}= {value}" if op != "*" else f"    a{w} *= 1.0 + 0.5 * {value}"]


def generate_aliased(seed: int) -> AliasedCase:
    rng = random.Random(seed)
    n_arrays = rng.choice([2, 2, 3])
    has_scalar = rng.random() < 0.6
    written = frozenset(rng.sample(range(n_arrays), rng.choice([0, 1, 1, 1, 2])))
    name = f"aliased_{seed}"
    params = [f"a{k}" for k in range(n_arrays)] + (["s"] if has_scalar else [])
    lines = [f"def {name}({', '.join(params)}):", "    acc = 0.0", f"    for i in range(len(a0) - {K}):"]
    stores = [f"        a{k}[i + {rng.randint(0, K)}] = {_expr(rng, n_arrays, has_scalar, 2, K)}"
              for k in sorted(written)]
    updates = [f"        acc = acc * {round(rng.uniform(0.5, 0.95), 2)} + {_expr(rng, n_arrays, has_scalar, 2, K)}"
               for _ in range(rng.randint(1, 2))]
    body = stores + updates
    rng.shuffle(body)
    lines += [line.replace("[i + 0]", "[i]") for line in body]
    if rng.random() < 0.7:
        lines += ["    for i in range(len(a0)):",
                  f"        acc += a{rng.randrange(n_arrays)}[i] * {_expr(rng, n_arrays, has_scalar, 1, 0)}"]
    lines.append("    return acc")
    lines[2:2] = _whole_array_update(seed, n_arrays, has_scalar, written)
    pattern = rng.choice(PATTERNS)
    views, sizes = _views(rng, pattern, n_arrays, written)
    floats = list(range(n_arrays + has_scalar))
    argnums = tuple(sorted(rng.sample(floats, rng.randint(1, len(floats)))))
    dup = frozenset(written | {k for k in range(n_arrays) if rng.random() < 0.6})
    return AliasedCase(seed, name, "\n".join(lines) + "\n", n_arrays, has_scalar, written, sizes, views,
                       pattern, argnums, dup, rng.choice(SHADOW_MODES), round(rng.uniform(-1, 1), 3),
                       rng.randrange(2**31))


def show_aliased(seed: int) -> str:
    c = generate_aliased(seed)
    return (f"# seed {seed}: pattern {c.pattern}, views {c.views}, buffers {c.buffer_sizes}, "
            f"writes {sorted(c.written)}, argnums {c.argnums}, Duplicated {sorted(c.dup)}, "
            f"shadows {c.shadow_mode}\n{c.source}")


def python_function(case: AliasedCase) -> Callable:
    """The generated function as plain Python (its source is registered
    with linecache, so the frontend can read it)."""
    filename = f"<adpasses fuzz aliased {case.seed}>"
    linecache.cache[filename] = (len(case.source), None, case.source.splitlines(True), filename)
    env: dict[str, object] = {"math": math, "np": np}
    exec(compile(case.source, filename, "exec"), env)
    return env[case.name]  # type: ignore[return-value]


# -- the reference ------------------------------------------------------------------------


def _shares(u: ViewSpec, v: ViewSpec) -> bool:
    return u.buffer == v.buffer and bool(u.elements() & v.elements())


def _self_overlapping(v: ViewSpec) -> bool:
    return v.step == 0


def written_groups(case: AliasedCase) -> set[int]:
    """Arrays that share memory, transitively, with an array the program
    writes (the arrays it writes included)."""
    group = set(case.written)
    changed = True
    while changed:
        changed = False
        for k in range(case.n_arrays):
            if k not in group and any(_shares(case.views[k], case.views[j]) for j in group):
                group.add(k)
                changed = True
    return group


class Reference:
    """Runs of the plain Python function on copies of the case's memory."""

    def __init__(self, case: AliasedCase, fn: Callable, buffers: list[np.ndarray]):
        self.case, self.fn, self.buffers = case, fn, buffers

    def run(self, buffers: list[np.ndarray], scalar: float,
            replace: dict[int, np.ndarray] | None = None) -> tuple[float, list[np.ndarray]]:
        """f on copies of `buffers` viewed as the case says (arrays in
        `replace` passed instead of their views); the result and the
        final buffers."""
        work = [b.copy() for b in buffers]
        made: dict[ViewSpec, np.ndarray] = {}
        args: list[object] = []
        for k, v in enumerate(self.case.views):
            if replace and k in replace:
                args.append(replace[k])
                continue
            if v not in made:  # identical views are one object, as in the call
                made[v] = v.of(work[v.buffer], writeable=True)
            args.append(made[v])
        if self.case.has_scalar:
            args.append(scalar)
        return float(self.fn(*args)), work

    def value(self) -> tuple[float, list[np.ndarray]]:
        return self.run(self.buffers, self.case.scalar)

    def memory_derivative(self, k: int, perturbable: set[int] | None = None) -> np.ndarray:
        """d result / d(memory element) through view k's elements.
        `perturbable`: arrays that see the perturbed memory (default all);
        the others see the unperturbed copy (constants)."""
        v = self.case.views[k]
        out = np.zeros(N)
        for i, e in enumerate(sorted_elements(v)):
            out_index = [j for j in range(N) if v.offset + j * v.step == e]
            d = self._fd(lambda h: self._perturbed_memory(v.buffer, e, h, perturbable))
            for j in out_index:
                out[j] = d
        return out

    def _perturbed_memory(self, b: int, e: int, h: float, perturbable: set[int] | None) -> float:
        bufs = [x.copy() for x in self.buffers]
        bufs[b][e] += h
        if perturbable is None:
            return self.run(bufs, self.case.scalar)[0]
        # constants read the unperturbed memory: pass them views of the original
        originals = [x.copy() for x in self.buffers]
        replace = {j: self.case.views[j].of(originals[self.case.views[j].buffer], writeable=True)
                   for j in range(self.case.n_arrays) if j not in perturbable}
        return self.run(bufs, self.case.scalar, replace)[0]

    def argument_derivative(self, k: int) -> np.ndarray:
        """d result / d(argument k) with argument k a separate array (a
        perturbed copy), the others on the case's memory."""
        v = self.case.views[k]
        base = np.array(v.of(self.buffers[v.buffer]))
        out = np.zeros(N)
        for i in range(N):
            def at(h: float, i: int = i) -> float:
                x = base.copy()
                x[i] += h
                return self.run(self.buffers, self.case.scalar, {k: x})[0]
            out[i] = self._fd(at)
        return out

    def scalar_derivative(self) -> float:
        return self._fd(lambda h: self.run(self.buffers, self.case.scalar + h)[0])

    @staticmethod
    def _fd(f: Callable[[float], float]) -> float:
        h = 1e-6
        return (f(h) - f(-h)) / (2 * h)


def sorted_elements(v: ViewSpec) -> list[int]:
    return sorted(v.elements())


def close(got: float, want: float, rel: float, scale: float = 1.0) -> bool:
    return math.isfinite(got) and abs(got - want) <= rel * max(abs(got), abs(want)) + 1e-8 * max(1.0, scale)


# -- the checks ---------------------------------------------------------------------------


class _Failure(Exception):
    def __init__(self, kind: str, detail: str):
        super().__init__(detail)
        self.kind, self.detail = kind, detail


def _expect_error(what: str, call: Callable[[], object]) -> None:
    try:
        call()
    except ValueError as e:
        if "argument" not in str(e):
            raise _Failure("wrong error", f"{what}: ValueError naming no argument: {e}") from None
        return
    except Exception as e:  # noqa: BLE001
        raise _Failure("wrong error", f"{what}: expected ValueError, got {type(e).__name__}: {e}") from None
    raise _Failure("missed error", f"{what}: returned; the arguments break the rules (expected ValueError)")


def _no_error(what: str, call: Callable[[], object]) -> object:
    try:
        return call()
    except ValueError as e:
        raise _Failure("needless error", f"{what}: ValueError for a call with a defined result: {e}") from None
    except Exception as e:  # noqa: BLE001
        raise _Failure("wrong error", f"{what}: {type(e).__name__}: {e}") from None


def _check_close(kind: str, what: str, got: np.ndarray | float, want: np.ndarray | float, rel: float) -> None:
    g, w = np.atleast_1d(np.asarray(got, float)), np.atleast_1d(np.asarray(want, float))
    scale = float(np.max(np.abs(w))) if w.size else 1.0
    bad = [i for i in range(w.size) if not close(float(g[i]), float(w[i]), rel, scale)]
    if bad:
        raise _Failure(kind, f"{what}: got {np.round(g, 8).tolist()}, expected {np.round(w, 8).tolist()}")


class _Call:
    """The arrays of one API call, built from fresh copies of the buffers."""

    def __init__(self, case: AliasedCase, buffers: list[np.ndarray]):
        self.case = case
        self.buffers = [b.copy() for b in buffers]
        made: dict[ViewSpec, np.ndarray] = {}
        self.arrays = []
        for v in case.views:
            if v not in made:
                made[v] = v.of(self.buffers[v.buffer])
            self.arrays.append(made[v])

    def args(self) -> list[object]:
        return [*self.arrays, *([self.case.scalar] if self.case.has_scalar else [])]


def check_jit(case: AliasedCase, jf, ref: Reference) -> None:  # type: ignore[no-untyped-def]
    call = _Call(case, ref.buffers)
    if any(not case.views[k].writeable for k in case.written):
        _expect_error("jit (a read-only array it writes)", lambda: jf(*call.args()))
        return
    got = _no_error("jit", lambda: jf(*call.args()))
    value, final = ref.value()
    _check_close("wrong primal", "jit result", float(got), value, 1e-9)  # type: ignore[arg-type]
    for b, (ours, theirs) in enumerate(zip(call.buffers, final)):
        _check_close("wrong primal", f"jit: buffer {b} after the call", ours, theirs, 1e-9)


def check_grad(case: AliasedCase, jf, ref: Reference, with_value: bool) -> None:  # type: ignore[no-untyped-def]
    import adpasses

    what = f"{'value_and_grad' if with_value else 'grad'}(f, {case.argnums})"
    g = (adpasses.value_and_grad if with_value else adpasses.grad)(jf, case.argnums)
    call = _Call(case, ref.buffers)
    if any(_self_overlapping(case.views[k]) for k in case.written):
        _expect_error(f"{what} (a written array whose elements share memory)", lambda: g(*call.args()))
        return
    out = _no_error(what, lambda: g(*call.args()))
    for b, (after, before) in enumerate(zip(call.buffers, ref.buffers)):
        if not np.array_equal(after, before):
            raise _Failure("changed argument", f"{what}: buffer {b} changed: {before.tolist()} -> "
                                               f"{after.tolist()}")
    grads = out[1] if with_value else out  # type: ignore[index]
    if with_value:
        _check_close("wrong primal", f"{what} value", out[0], ref.value()[0], 1e-9)  # type: ignore[index]
    group = written_groups(case)
    for k, got in zip(case.argnums, grads):  # type: ignore[call-overload]
        if k == case.n_arrays:
            want = ref.scalar_derivative()
        elif k in group:
            want = ref.memory_derivative(k)
        else:
            want = ref.argument_derivative(k)
        _check_close("wrong gradient", f"{what}: d/d{case.params[k]}", got, want, 1e-5)


def autodiff_validity(case: AliasedCase) -> str | None:
    """Why the autodiff call of this case breaks the rules, or None."""
    dup, views, written = case.dup, case.views, case.written
    const = [k for k in range(case.n_arrays) if k not in dup]
    if any(not views[k].writeable for k in written):
        return "a read-only array it writes"
    if case.shadow_mode in ("self", "other", "shared", "stride0"):
        return f"shadow pattern {case.shadow_mode}"
    for c in const:
        for k in dup:
            if _shares(views[c], views[k]) and k in written:
                return "a constant sharing memory with a written Duplicated array"
    if case.shadow_mode == "separate":
        for k in dup:
            if k in written and _self_overlapping(views[k]):
                return "a written array whose elements share memory, with a shadow of distinct elements"
            for j in dup:
                if j > k and _shares(views[k], views[j]) and (k in written or j in written):
                    return "overlapping written arrays with separate shadows"
    return None


def _autodiff_shadows(case: AliasedCase, call: _Call, shadow_buffers: list[np.ndarray]) -> dict[int, np.ndarray]:
    dup = sorted(case.dup)
    mode = case.shadow_mode
    if mode == "mirrored":
        made: dict[ViewSpec, np.ndarray] = {}
        out = {}
        for k in dup:
            v = ViewSpec(case.views[k].buffer, case.views[k].offset, case.views[k].step)
            if v not in made:
                made[v] = v.of(shadow_buffers[v.buffer])
            out[k] = made[v]
        return out
    out = {k: np.zeros(N) for k in dup}
    k = dup[0]
    if mode == "self":
        out[k] = call.arrays[k]
    elif mode == "other":
        out[k] = call.arrays[(k + 1) % case.n_arrays]
    elif mode == "shared":
        out[dup[1]] = out[k]
    elif mode == "stride0":
        out[k] = np.lib.stride_tricks.as_strided(np.zeros(1), (N,), (0,), writeable=True)
    return out


def _usable_shadow_mode(case: AliasedCase) -> str:
    """The case's shadow mode, or `separate` where it cannot be built
    (`shared` needs two Duplicated arrays sharing no memory, `stride0` one
    with distinct elements, `self`/`other` a writable array)."""
    dup = sorted(case.dup)
    mode = case.shadow_mode
    if mode == "shared" and (len(dup) < 2 or _shares(case.views[dup[0]], case.views[dup[1]])):
        return "separate"
    if mode == "stride0" and (not dup or _self_overlapping(case.views[dup[0]])):
        return "separate"
    if mode in ("self", "other") and not dup:
        return "separate"
    if mode == "other" and not case.views[(dup[0] + 1) % case.n_arrays].writeable:
        return "separate"
    if mode == "self" and not case.views[dup[0]].writeable:
        return "separate"
    return mode


def check_autodiff(case: AliasedCase, jf, ref: Reference) -> None:  # type: ignore[no-untyped-def]
    import adpasses
    from adpasses import Const, Duplicated

    if not case.dup:
        return
    case.shadow_mode = _usable_shadow_mode(case)
    call = _Call(case, ref.buffers)
    shadow_buffers = [np.zeros_like(b) for b in ref.buffers]
    shadows = _autodiff_shadows(case, call, shadow_buffers)
    args: list[object] = [Duplicated(call.arrays[k], shadows[k]) if k in case.dup else Const(call.arrays[k])
                          for k in range(case.n_arrays)]
    if case.has_scalar:
        args.append(case.scalar)
    what = f"autodiff(f, Duplicated {sorted(case.dup)}, shadows {case.shadow_mode})"
    why = autodiff_validity(case)
    if why is not None:
        _expect_error(f"{what} ({why})", lambda: adpasses.autodiff(jf, *args))
        return
    _, value = _no_error(what, lambda: adpasses.autodiff(jf, *args, return_primal=True))  # type: ignore[misc]
    ref_value, final = ref.value()
    _check_close("wrong primal", f"{what} value", value, ref_value, 1e-9)
    for b, (ours, theirs) in enumerate(zip(call.buffers, final)):
        _check_close("wrong primal", f"{what}: buffer {b} after the call", ours, theirs, 1e-9)
    for k in sorted(case.dup):
        if case.shadow_mode == "mirrored":
            want = ref.memory_derivative(k, perturbable=set(case.dup))
        else:
            want = ref.argument_derivative(k)
        _check_close("wrong gradient", f"{what}: shadow of a{k}", shadows[k], want, 1e-5)
    if case.shadow_mode == "mirrored":
        reached = {(case.views[k].buffer, e) for k in case.dup for e in case.views[k].elements()}
        for b, sb in enumerate(shadow_buffers):
            for e in range(sb.size):
                if (b, e) not in reached and sb[e] != 0.0:
                    raise _Failure("wrong gradient", f"{what}: shadow buffer {b}[{e}] = {sb[e]}, which "
                                                     "no Duplicated view reaches, changed")


def check_aliased(case: AliasedCase) -> Outcome:
    import adpasses

    fn = python_function(case)
    jf = adpasses.jit(fn)
    data = np.random.default_rng(case.data_seed)
    buffers = [data.uniform(-1.0, 1.0, n) for n in case.buffer_sizes]
    ref = Reference(case, fn, buffers)
    value = ref.value()[0]
    if not math.isfinite(value) or abs(value) > 1e6:
        return Outcome("discard", f"reference value {value}")
    checked = 0
    try:
        check_jit(case, jf, ref)
        check_grad(case, jf, ref, with_value=False)
        check_grad(case, jf, ref, with_value=True)
        check_autodiff(case, jf, ref)
        checked = 4
    except _Failure as f:
        return Outcome(f.kind, f"{f.detail}\n{show_aliased(case.seed)}")
    except adpasses.CompileError as e:
        return Outcome("compiler error", str(e))
    return Outcome("ok", checked=checked)


def run_aliased_case(item: int) -> Outcome:
    """One seed of the aliased mode (the runner's `case` in worker processes)."""
    import warnings

    from adpasses.tools.fuzz.runner import forget_compiled

    warnings.simplefilter("ignore")
    try:
        return check_aliased(generate_aliased(item))  # type: ignore[arg-type]
    except Exception as err:  # noqa: BLE001
        return Outcome("fuzzer error", f"{type(err).__name__}: {err}")
    finally:
        forget_compiled()
