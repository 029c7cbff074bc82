"""Calls beyond plain functions: compile-time arguments (None, functions),
`x is None` decided while compiling, and lambdas.

A callee is compiled once per kind of each argument; a None or a function
passed to it (or left as its default) is not a run-time parameter but a
compile-time object of that compiled version. So `if radius is None:` in
the callee is decided while compiling it, and the branch not taken is not
compiled (it may use `radius` as a number). `is`/`is not` compare such
objects; a number or an array is never None.

A lambda bound to a local name (`sq = lambda t: t * t`) is compiled where
it is called, with the variables it sees at that moment (Python's late
binding of closures); one bound to a global is compiled like a def
(`compiler._source`).
"""

from __future__ import annotations

import ast
import types
from dataclasses import dataclass, field

from adpasses.frontend.binding import binder_for
from adpasses.frontend.values import Array, PyObject, Scalar


@dataclass(eq=False)
class LocalLambda:
    """`lambda ...: body` evaluated in a compiled function: its node and
    the values of its defaults (evaluated where the lambda is, as Python
    does)."""

    node: ast.Lambda
    defaults: tuple[object, ...]
    owner: object  # the FunctionCompiler that defined it
    bind: object = field(default=None)  # binder of its parameters


class CallMixin:
    # -- compile-time arguments -------------------------------------------------------

    def is_static_argument(self, value: PyObject) -> bool:
        """Passed to a callee as a compile-time object (see the module doc);
        a local lambda cannot be: its body reads this function's values."""
        if isinstance(value.obj, LocalLambda):
            self.error(value.obj.node, "a lambda defined inside a function cannot be passed to another "
                                       "function; define it at module level (name = lambda ...) or with def")
        return True

    # -- `is`, decided while compiling ----------------------------------------------------

    def identity_compare(self, node: ast.Compare) -> Scalar:
        return Scalar(self.const_bool(self.identity_truth(node)))

    def identity_truth(self, node: ast.Compare) -> bool:
        """`a is b`, `a is not b` (chains too): True when both are the same
        compile-time object; a number or an array is never None."""
        left = self.expr(node.left)
        result = True
        for op, comparator in zip(node.ops, node.comparators):
            right = self.expr(comparator)
            if not isinstance(op, (ast.Is, ast.IsNot)):
                self.error(node, "`is` and `is not` cannot be mixed with other comparisons here; "
                                 "write them as separate conditions joined with `and`")
            same = self.same_object(left, right, node)
            result = result and (same if isinstance(op, ast.Is) else not same)
            left = right
        return result

    def same_object(self, a: object, b: object, node: ast.AST) -> bool:
        if isinstance(a, PyObject) and isinstance(b, PyObject):
            return a.obj is b.obj
        if isinstance(a, PyObject) or isinstance(b, PyObject):
            return False  # a number or an array against None / a function
        if isinstance(a, Array) and isinstance(b, Array):
            self.error(node, "`is` between two arrays is not supported in compiled code; compare them "
                             "outside, or pass a flag")
        self.error(node, "`is` compares objects; compare numbers with == or !=")

    def static_truth(self, test: ast.expr) -> bool | None:
        """The value of a condition known while compiling (`x is None`,
        `not (f is None)`, `and`/`or` of those), or None if it depends on
        run-time values. Only conditions with `is` are looked at: others are
        never evaluated here."""
        if isinstance(test, ast.Compare) and all(isinstance(op, (ast.Is, ast.IsNot)) for op in test.ops):
            with self.at(test):
                return self.identity_truth(test)
        if isinstance(test, ast.Constant) and test.value is None:
            return False
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            inner = self.static_truth(test.operand)
            return None if inner is None else not inner
        if isinstance(test, ast.BoolOp):
            is_and = isinstance(test.op, ast.And)
            for value in test.values:
                truth = self.static_truth(value)
                if truth is None:
                    return None
                if truth != is_and:  # False in an `and`, True in an `or`: decided
                    return truth
            return is_and
        return None

    def static_bool_operands(self, node: ast.BoolOp) -> bool | list[ast.expr]:
        """`a and b and ...` with the operands known while compiling taken
        out: a bool if that decides it (`r is not None and r > 0` with r
        None is False, and `r > 0` is never compiled), else the operands
        left to evaluate at run time."""
        is_and = isinstance(node.op, ast.And)
        left: list[ast.expr] = []
        for value in node.values:
            truth = self.static_truth(value) if not left else None
            if truth is None:
                left.append(value)
            elif truth != is_and:
                return truth
        return left if left else is_and

    # -- lambdas --------------------------------------------------------------------------

    def expr_Lambda(self, node: ast.Lambda) -> PyObject:
        args = node.args
        if args.vararg or args.kwarg or args.kwonlyargs or args.posonlyargs:
            self.error(node, "only plain parameters are supported in a lambda (no *args, **kwargs, "
                             "keyword-only or positional-only parameters)")
        defaults = tuple(self.expr(d) for d in args.defaults)
        names = [a.arg for a in args.args]
        fn = LocalLambda(node, defaults, self)
        fn.bind = binder_for(names, defaults, "<lambda>")
        return PyObject(fn)

    def call_lambda(self, fn: LocalLambda, node: ast.Call) -> object:
        """The lambda's body compiled here, its parameters bound to the
        call's arguments, the rest of its names to this function's variables
        as they are now."""
        if fn.owner is not self:
            self.error(node, "a lambda defined inside a function can only be called in that function")
        active = self.__dict__.setdefault("_inlining", [])
        if fn in active:
            self.error(node, "recursion through a lambda is not supported; rewrite it as a loop")
        for a in node.args:
            if isinstance(a, ast.Starred):
                self.error(a, "argument unpacking (*args) is not supported; pass the arguments one by one")
        for kw in node.keywords:
            if kw.arg is None:
                self.error(kw.value, "keyword unpacking (**kwargs) is not supported; pass the arguments "
                                     "one by one")
        try:
            bound = fn.bind(*node.args, **{kw.arg: kw.value for kw in node.keywords})
        except TypeError as err:
            self.error(node, f"{err} (the lambda is defined at line {self.loc(fn.node).line.data})")
        evaluated = {id(a): self.expr(a) for a in [*node.args, *(kw.value for kw in node.keywords)]}
        values = [evaluated[id(v)] if isinstance(v, ast.AST) else v for v in bound]
        saved = self.env
        self.env = dict(saved)
        for param, value in zip(fn.node.args.args, values):
            self.env[param.arg] = value
        active.append(fn)
        try:
            return self.expr(fn.node.body)
        finally:
            active.pop()
            self.env = saved


def lambda_def(pyfunc: types.FunctionType, tree: ast.Module, first: int) -> ast.FunctionDef | None:
    """A global lambda's source as `def <lambda>(params): return body`: the
    one lambda in its source lines that starts on its first line and has
    its parameters (None if that is not exactly one)."""
    code = pyfunc.__code__
    names = list(code.co_varnames[: code.co_argcount])
    found = [n for n in ast.walk(tree) if isinstance(n, ast.Lambda)
             and n.lineno == code.co_firstlineno - first + 1
             and [a.arg for a in n.args.args] == names]
    if len(found) != 1:
        return None
    lam = found[0]
    ret = ast.copy_location(ast.Return(lam.body), lam.body)
    fdef = ast.FunctionDef(name="<lambda>", args=lam.args, body=[ret], decorator_list=[], returns=None,
                           type_params=[])
    return ast.copy_location(fdef, lam)
