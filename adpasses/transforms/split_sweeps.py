"""`ad-split-sweeps`: split mode (issue 20). A gradient built for a split
`ad.autodiff` becomes two functions, and each half of the request a call.

`ad-build-gradients` builds a split request's gradient whole (the primal
results returned, no loop reversed inside its forward loop) with an
`ad.split_point` where the forward sweep ends. This step cuts it there:

    @<g>_aug(primal arguments) -> (primal results, tape...)
    @<g>_rev(shadows, seeds, tape...) -> (derivatives)

The tape is every value the reverse sweep reads from the forward sweep or
from the primal arguments (tape buffers and their counters, cached
scalars, local arrays, the primal memrefs themselves), in the order the
reverse sweep first reads them; constants are rebuilt in the reverse half
instead. The reverse half takes the primal memrefs from the tape, not from
its caller, so its loops run the trip counts the forward half taped for
(a tape buffer's accesses are unchecked). Local arrays the reverse reads
live on the heap (an `alloca` of the forward sweep becomes an `alloc`, freed
at the end of the reverse half), and their buffers are plain allocations
(not per-call workspaces: two tapes may be alive at once). The reverse half
frees the tape: call it once per call of the forward half, and leave the
primal memory as the forward half left it (Enzyme's contract).

Each `ad.autodiff {split = forward}` becomes a call of `_aug`, its
`!ad.split_tape` result the call's tape results; each `{split = reverse}`
a call of `_rev` with its shadows, seeds and those values. A tape may be
returned by a function or taken as an argument (`ad-wrap` with `split`
writes such functions): their signatures and calls carry the values.
Anything else that uses a tape is an error at the op.

A tape that grows (the values of an `scf.while` loop, or of loops whose
trip counts are not known before them) lives in the forward function's
stack frame: split mode rejects it at the loop.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func, memref
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, FunctionType, ModuleOp
from xdsl.ir import Attribute, Block, BlockArgument, Operation, OpResult, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.traits import SymbolTable

from adpasses.analysis.memref_views import memory_object
from adpasses.core.diagnostics import CompileError, error_at
from adpasses.dialects.ad import (
    TWIN_END_ATTR,
    TWIN_ID_ATTR,
    TWIN_OF_ATTR,
    WORKSPACE_ATTR,
    AutodiffOp,
    SplitPointOp,
    SplitTapeType,
    TapeCreateOp,
    TapeType,
)
from adpasses.transforms.gradient_marks import GradientRequest, marked_functions


@dataclass(frozen=True)
class SplitHalves:
    """The two functions of one split request, and the tape's types."""

    aug: str
    rev: str
    tape_types: tuple[Attribute, ...]
    n_results: int
    """The primal's results, which the augmented primal returns first."""


@dataclass(frozen=True)
class SplitSweepsPass(ModulePass):
    name = "ad-split-sweeps"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        halves: dict[GradientRequest, SplitHalves] = {}
        for function in marked_functions(op):
            request = GradientRequest.of_function(function)
            if request is not None and request.split:
                halves[request] = split_gradient(op, function, request)
        rewrite_split_requests(op, halves)


# -- cutting one gradient ------------------------------------------------------


def split_gradient(module: ModuleOp, function: func.FuncOp, request: GradientRequest) -> SplitHalves:
    """Replace the split gradient `function` by its two halves."""
    block = function.body.block
    ops = list(block.ops)
    points = [o for o in ops if isinstance(o, SplitPointOp)]
    if len(points) != 1:
        raise error_at(function, f"is a split gradient with {len(points)} ad.split_point ops; "
                                 "expected one (built by ad-build-gradients for split = forward|reverse)")
    ret = ops[-1]
    assert isinstance(ret, func.ReturnOp)
    cut = ops.index(points[0])
    forward_ops, reverse_ops = ops[:cut], ops[cut + 1:-1]
    forward = set(forward_ops)
    primal = SymbolTable.lookup_symbol(module, request.primal)
    assert isinstance(primal, func.FuncOp)
    n_results = len(primal.function_type.outputs.data)
    primal_args, reverse_args = _classify_arguments(block, request)

    def top(op: Operation) -> Operation:
        while op.parent_block() is not block:
            parent = op.parent_op()
            assert parent is not None
            op = parent
        return op

    for arg in reverse_args:  # shadows and seeds: the reverse sweep's alone
        for use in arg.uses:
            if top(use.operation) in forward:
                raise error_at(use.operation, "the forward sweep of a split gradient reads a shadow "
                                              "or a seed; differentiate without split")
    for value in ret.arguments[:n_results]:
        if isinstance(value, OpResult) and value.op.parent_block() is block and value.op not in forward:
            raise error_at(value.op, "a primal result of a split gradient is computed in its reverse "
                                     "sweep; differentiate without split")

    # The values the reverse sweep reads from the forward sweep (or the
    # primal arguments), in the order it first reads them.
    crossing: dict[SSAValue, None] = {}
    reverse_uses = [(o, v) for r in reverse_ops for o in r.walk() for v in o.operands]
    reverse_uses += [(ret, v) for v in ret.arguments[n_results:]]
    for _, value in reverse_uses:
        if isinstance(value, BlockArgument) and value.block is block and value in primal_args:
            crossing[value] = None
        elif isinstance(value, OpResult) and value.op.parent_block() is block and value.op in forward:
            crossing[value] = None

    reverse_block = Block()
    constants = [v for v in crossing if isinstance(v, OpResult) and isinstance(v.op, arith.ConstantOp)]
    rebuilt: dict[SSAValue, SSAValue] = {}
    for value in constants:  # rebuilt in the reverse half, not taped
        del crossing[value]
        clone = value.op.clone()
        reverse_block.add_op(clone)
        rebuilt[value] = clone.results[0]
    frees: list[SSAValue] = []
    moved: dict[SSAValue, SSAValue] = {}  # an alloca's result -> its alloc's
    for value in list(crossing):
        if isinstance(value.type, TapeType) and isinstance(value, OpResult) and isinstance(
                value.op, TapeCreateOp) and value.op.capacity is not None:
            raise error_at(value.op, "split mode hands tapes over as memrefs: lower them first "
                                     "(ad-lower-tapes; the reverse pipeline's lower-tapes option)")
        if isinstance(value.type, TapeType):
            raise error_at(value.op if isinstance(value, OpResult) else function,
                           "split mode cannot hand this growable tape (the values of an scf.while loop, "
                           "or of loops whose trip counts are not known before them) from the forward "
                           "function to the reverse one; differentiate without split, or write the loop "
                           "as an scf.for with a trip count known before it")
        if isinstance(value.type, memref.MemRefType):
            base = memory_object(value)
            if isinstance(base, OpResult) and base.op in forward:
                old = base
                base = _on_heap(base)  # an alloca would die with the forward function's frame
                if base is not old:
                    moved[old] = base
                if base not in crossing:
                    crossing[base] = None
                if base not in frees and not _freed_in(base, reverse_ops):
                    frees.append(base)
    crossing = dict.fromkeys(moved.get(v, v) for v in crossing)
    # Per-call workspaces that the tape holds become plain allocations
    # (two tapes may be alive at once): here and where the reverse frees them.
    for value in crossing:
        if isinstance(value, OpResult) and isinstance(value.op, memref.AllocOp):
            value.op.attributes.pop(WORKSPACE_ATTR, None)
            for r in reverse_ops:
                for o in r.walk():
                    if isinstance(o, memref.DeallocOp) and o.memref is value:
                        o.attributes.pop(WORKSPACE_ATTR, None)
    tape = list(crossing)
    ops = list(block.ops)  # allocas were replaced
    cut = ops.index(points[0])
    forward_ops, reverse_ops = ops[:cut], ops[cut + 1:-1]

    # The augmented primal.
    arg_attrs = _arg_attrs(function)
    aug = func.FuncOp(f"{function.sym_name.data}_aug",
                      ([a.type for a in primal_args], [*primal.function_type.outputs.data, *(v.type for v in tape)]),
                      arg_attrs=_pick(arg_attrs, [a.index for a in primal_args]))
    aug.location = function.location
    aug_block = aug.body.block
    for old, new in zip(primal_args, aug_block.args):
        new.name_hint = old.name_hint
    # The reverse half.
    rev_inputs = [a.type for a in reverse_args] + [v.type for v in tape]
    rev_attrs = _pick(arg_attrs, [a.index for a in reverse_args]
                      + [v.index if isinstance(v, BlockArgument) else -1 for v in tape])
    rev = func.FuncOp(f"{function.sym_name.data}_rev",
                      (rev_inputs, list(function.function_type.outputs.data[n_results:])),
                      arg_attrs=rev_attrs)
    rev.location = function.location
    for arg_type in rev_inputs:
        reverse_block.insert_arg(arg_type, len(reverse_block.args))
    old_entry = rev.body.block
    rev.body.insert_block_before(reverse_block, old_entry)
    rev.body.detach_block(old_entry)

    for op in forward_ops:
        op.detach()
        aug_block.add_op(op)
    aug_return = func.ReturnOp(*ret.arguments[:n_results], *tape)
    aug_return.location = ret.location
    aug_block.add_op(aug_return)
    for op in [*reverse_ops, ret]:
        op.detach()
        reverse_block.add_op(op)
    ret.operands = ret.operands[n_results:]
    points[0].detach()
    points[0].erase()

    in_rev = lambda use: rev.is_ancestor(use.operation)  # noqa: E731
    for old, new in zip(primal_args, aug_block.args):
        old.replace_uses_with_if(new, lambda use: aug.is_ancestor(use.operation))
    rev_args = list(reverse_block.args)
    for old, new in zip([*reverse_args, *tape], rev_args):
        new.name_hint = old.name_hint
        old.replace_uses_with_if(new, in_rev)
    for old, new in rebuilt.items():
        old.replace_uses_with_if(new, in_rev)
    for base in frees:
        free = memref.DeallocOp.get(rev_args[len(reverse_args) + tape.index(base)])
        free.location = ret.location
        reverse_block.insert_op_before(free, ret)

    _drop_orphan_twins(aug)
    _drop_orphan_twins(rev)
    parent = function.parent_block()
    assert parent is not None
    parent.insert_op_before(aug, function)
    parent.insert_op_before(rev, function)
    function.detach()
    function.erase(safe_erase=False)
    return SplitHalves(aug.sym_name.data, rev.sym_name.data, tuple(v.type for v in tape), n_results)


def _classify_arguments(block: Block, request: GradientRequest) -> tuple[list[BlockArgument], list[BlockArgument]]:
    """The gradient's arguments: (primal arguments, shadows and seeds)."""
    args = iter(block.args)
    primal_args: list[BlockArgument] = []
    others: list[BlockArgument] = []
    for act in request.activity:
        primal_args.append(next(args))
        if act in ("dup", "dupnoneed"):
            others += [next(args) for _ in range(request.width)]
    others += list(args)  # the seeds
    return primal_args, others


def _on_heap(base: OpResult) -> OpResult:
    """`base` as a heap allocation: an `alloca` becomes an `alloc` with
    the same sizes (what reads it is unchanged)."""
    op = base.op
    if not isinstance(op, memref.AllocaOp):
        return base
    alloc = memref.AllocOp.create(operands=list(op.operands), result_types=list(op.result_types),
                                  properties=dict(op.properties), attributes=dict(op.attributes))
    alloc.location = op.location
    block = op.parent_block()
    assert block is not None
    block.insert_op_before(alloc, op)
    new = alloc.results[0]
    new.name_hint = base.name_hint
    base.replace_all_uses_with(new)
    block.erase_op(op)
    return new


def _freed_in(base: SSAValue, ops: list[Operation]) -> bool:
    return any(isinstance(o, memref.DeallocOp) and o.memref is base for r in ops for o in r.walk())


def _arg_attrs(function: func.FuncOp) -> list[DictionaryAttr] | None:
    attrs = function.arg_attrs
    return None if attrs is None else list(attrs.data)  # type: ignore[arg-type]


def _pick(attrs: list[DictionaryAttr] | None, indices: list[int]) -> ArrayAttr | None:
    if attrs is None:
        return None
    return ArrayAttr([attrs[k] if k >= 0 else DictionaryAttr({}) for k in indices])


def _drop_orphan_twins(function: func.FuncOp) -> None:
    """Twin tags whose other end went to the other half: a check in another
    call proves nothing here (ad-elide-shadow-checks reads the tags)."""
    ids = {o.attributes[TWIN_ID_ATTR] for o in function.walk() if TWIN_ID_ATTR in o.attributes}
    ofs = {o.attributes[TWIN_OF_ATTR] for o in function.walk() if TWIN_OF_ATTR in o.attributes}
    for o in function.walk():
        if TWIN_OF_ATTR in o.attributes and o.attributes[TWIN_OF_ATTR] not in ids:
            del o.attributes[TWIN_OF_ATTR]
        if TWIN_ID_ATTR in o.attributes and o.attributes[TWIN_ID_ATTR] not in ofs:
            del o.attributes[TWIN_ID_ATTR]
            o.attributes.pop(TWIN_END_ATTR, None)


# -- the requests: calls, and tapes through function boundaries -----------------

_TAPE_USES = ("a split ad.autodiff's tape (!ad.split_tape) may only be passed to a `split = reverse` "
              "ad.autodiff of the same function and activities, returned by a function, or passed to one")


def rewrite_split_requests(module: ModuleOp, halves: dict[GradientRequest, SplitHalves]) -> None:
    """Each split `ad.autodiff` as a call of its half; every
    `!ad.split_tape` value as the tape's values (function arguments,
    results and calls included)."""
    functions = [f for f in module.ops if isinstance(f, func.FuncOp)]
    if not halves and not any(isinstance(o, AutodiffOp) and o.split is not None for o in module.walk()) \
            and not any(isinstance(t, SplitTapeType) for f in functions
                        for t in [*f.function_type.inputs.data, *f.function_type.outputs.data]):
        return

    def halves_of(op: AutodiffOp) -> SplitHalves:
        request = GradientRequest.of_autodiff(op)
        if request not in halves:
            raise error_at(op, "has no split gradient: run ad-reverse (ad-build-gradients, then "
                               "ad-split-sweeps)")
        return halves[request]

    # 1. Signatures: which request each tape argument and tape result is of.
    arg_requests: dict[str, dict[int, GradientRequest]] = {}
    ret_requests: dict[str, dict[int, GradientRequest]] = {}
    for f in functions:
        ftype = f.function_type
        if not any(isinstance(t, SplitTapeType) for t in [*ftype.inputs.data, *ftype.outputs.data]):
            continue
        if not f.body.blocks:
            raise error_at(f, "declares an !ad.split_tape in its type but has no body to expand it "
                              "in: define it (--reverse-wrap=\"fn=F name=N split\" writes N_aug and "
                              "N_rev for such declarations)")
        name = f.sym_name.data
        for arg in f.body.blocks[0].args:
            if not isinstance(arg.type, SplitTapeType):
                continue
            readers = [u.operation for u in arg.uses]
            requests = {GradientRequest.of_autodiff(u) for u in readers
                        if isinstance(u, AutodiffOp) and u.split_mode == "reverse"}
            if len(requests) != 1:
                raise error_at(f, f"takes a tape (argument {arg.index}) that {len(requests)} split "
                                  "requests read; pass it to the `split = reverse` ad.autodiff it is for")
            arg_requests.setdefault(name, {})[arg.index] = requests.pop()
        for ret in [o for o in f.walk() if isinstance(o, func.ReturnOp)]:
            for k, value in enumerate(ret.arguments):
                if not isinstance(value.type, SplitTapeType):
                    continue
                if isinstance(value, OpResult) and isinstance(value.op, AutodiffOp):
                    request = GradientRequest.of_autodiff(value.op)
                elif isinstance(value, BlockArgument) and value.block is f.body.blocks[0] and value.index in arg_requests.get(name, {}):
                    request = arg_requests[name][value.index]
                else:
                    raise error_at(ret, "returns a tape that no split forward ad.autodiff of this "
                                        f"function gave: {_TAPE_USES}")
                ret_requests.setdefault(name, {})[k] = request
    for requests in [*arg_requests.values(), *ret_requests.values()]:
        for request in requests.values():
            if request not in halves:
                raise CompileError(f"no split gradient of @{request.primal}: run ad-reverse")

    # 2. In program order, producers before consumers.
    values: dict[SSAValue, list[SSAValue]] = {}
    requests_of: dict[SSAValue, GradientRequest] = {}
    replaced: list[Operation] = []

    def retire(old: Operation, new: Operation) -> None:
        block = old.parent_block()
        assert block is not None
        new.location = old.location
        block.insert_op_before(new, old)
        old.detach()
        replaced.append(old)

    def expand(op: Operation, operands) -> list[SSAValue]:  # type: ignore[no-untyped-def]
        out: list[SSAValue] = []
        for v in operands:
            if not isinstance(v.type, SplitTapeType):
                out.append(v)
            elif v in values:
                out += values[v]
            else:
                raise error_at(op, _TAPE_USES)
        return out

    for f in functions:
        if not f.body.blocks:
            continue
        name = f.sym_name.data
        block = f.body.blocks[0]
        for index, request in sorted(arg_requests.get(name, {}).items(), reverse=True):
            arg = block.args[index]
            types = halves[request].tape_types
            new = [block.insert_arg(t, index + 1 + k) for k, t in enumerate(types)]
            for k, value in enumerate(new):
                value.name_hint = f"{arg.name_hint or 'tape'}{k}"
            values[arg], requests_of[arg] = new, request
        for op in list(f.walk()):
            if isinstance(op, AutodiffOp) and op.split_mode == "forward":
                found = halves_of(op)
                callee = SymbolTable.lookup_symbol(module, found.aug)
                assert isinstance(callee, func.FuncOp)
                call = func.CallOp(found.aug, list(op.args), list(callee.function_type.outputs.data))
                retire(op, call)
                # with_primal = [...]: the op returns the chosen primal results
                choice = op.primal_choice
                chosen = range(found.n_results) if isinstance(choice, bool) else choice
                for old, k in zip(op.res[:-1], chosen):
                    old.replace_all_uses_with(call.res[k])
                values[op.res[-1]] = list(call.res[found.n_results:])
                requests_of[op.res[-1]] = GradientRequest.of_autodiff(op)
            elif isinstance(op, AutodiffOp) and op.split_mode == "reverse":
                found = halves_of(op)
                tape = op.args[-1]
                if tape not in values:
                    raise error_at(op, f"reads a tape no split forward ad.autodiff gave: {_TAPE_USES}")
                source = requests_of[tape]
                if source != GradientRequest.of_autodiff(op):
                    raise error_at(op, f"reads the tape of a split ad.autodiff of @{source.primal} with "
                                       f"activities [{', '.join(source.activity)}] -> "
                                       f"[{', '.join(source.ret_activity)}]; pass it the tape of its own request")
                call = func.CallOp(found.rev, [*op.args[:-1], *values[tape]], list(op.result_types))
                retire(op, call)
                for old, new_value in zip(op.res, call.res):
                    old.replace_all_uses_with(new_value)
            elif isinstance(op, func.CallOp) and (op.callee.root_reference.data in arg_requests
                                                   or op.callee.root_reference.data in ret_requests):
                callee = op.callee.root_reference.data
                returned = ret_requests.get(callee, {})
                groups = [list(halves[returned[k]].tape_types) if k in returned else [r.type]
                          for k, r in enumerate(op.res)]
                call = func.CallOp(op.callee, expand(op, op.arguments), [t for g in groups for t in g])
                retire(op, call)
                at = 0
                for k, old in enumerate(op.res):
                    group = list(call.res[at:at + len(groups[k])])
                    at += len(groups[k])
                    if k in returned:
                        values[old], requests_of[old] = group, returned[k]
                    else:
                        old.replace_all_uses_with(group[0])
            elif isinstance(op, func.ReturnOp) and any(isinstance(v.type, SplitTapeType) for v in op.arguments):
                retire(op, func.ReturnOp(*expand(op, op.arguments)))
            elif op is not f and any(isinstance(v.type, SplitTapeType) for v in op.operands):
                raise error_at(op, _TAPE_USES)
        if name in arg_requests or name in ret_requests:
            for index in sorted(arg_requests.get(name, {}), reverse=True):
                block.erase_arg(block.args[index], safe_erase=False)
            ret = next(o for o in f.walk() if isinstance(o, func.ReturnOp))
            inputs = [a.type for a in block.args]
            if f.arg_attrs is not None:
                f.arg_attrs = ArrayAttr([DictionaryAttr({}) for _ in inputs])
            f.function_type = FunctionType.from_lists(inputs, [v.type for v in ret.arguments])
    for op in reversed(replaced):
        op.erase(safe_erase=False)


# -- tapes the caller owns (the Python API) ---------------------------------------


def hand_tape_to_caller(module: ModuleOp, rev_name: str) -> None:
    """`@<rev_name>` frees nothing it takes: the caller owns the tape's
    memory. The Python API (`adpasses.split`) receives the forward half's
    tape buffers as numpy arrays that own them (docs/calling_convention.md,
    array results) and frees them by dropping those arrays, once, after the
    reverse half ran or when the tape is garbage-collected unused; the
    reverse half's own `memref.dealloc` of a tape argument would free them
    a second time."""
    rev = SymbolTable.lookup_symbol(module, rev_name)
    assert isinstance(rev, func.FuncOp), rev_name
    args = set(rev.body.block.args)
    for op in list(rev.walk()):
        if isinstance(op, memref.DeallocOp) and op.memref in args:
            op.detach()
            op.erase()
