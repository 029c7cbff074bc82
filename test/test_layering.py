"""Imports flow one way (issue 14, item 3; the rule is in docs/CONVENTIONS.md).

Builds the import graph of the installed `adpasses` package from the source
(`adpasses/`, and `dialects/`, `frontend/`, `tools/` as `adpasses.dialects`,
...): every `import` / `from ... import` at module level and inside
functions (those are "lazy": they run on first call, not at import).
Imports under `if TYPE_CHECKING:` are annotations only and not counted.
Importing `a.b.c` also runs `a.b`'s `__init__`, so it counts as an import
of each enclosing package too.

Checked:
- no import cycle among modules over module-level imports;
- the analyses and the cache planner never import the reverse builder, and
  the layers below never import the layers above (lazy imports included: a
  lazy import is still a dependency, it only hides the cycle).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCE_DIRS = {
    "adpasses": "adpasses",
    "dialects": "adpasses.dialects",
    "frontend": "adpasses.frontend",
    "tools": "adpasses.tools",
}


@dataclass(frozen=True)
class Import:
    importer: str
    imported: str
    lazy: bool
    line: int

    def __str__(self) -> str:
        kind = "lazy import" if self.lazy else "import"
        return f"{self.importer} ({kind}, line {self.line}) -> {self.imported}"


def package_modules() -> dict[str, tuple[Path, bool]]:
    """Dotted module name -> (file, is a package)."""
    modules = {}
    for folder, package in SOURCE_DIRS.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            parts = list(path.relative_to(ROOT / folder).with_suffix("").parts)
            is_package = parts[-1] == "__init__"
            if is_package:
                parts.pop()
            modules[".".join([package, *parts])] = (path, is_package)
    return modules


def _is_type_checking(node: ast.AST) -> bool:
    test = getattr(node, "test", None)
    return isinstance(node, ast.If) and (
        (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING")
        or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")
    )


def import_graph() -> tuple[set[str], list[Import]]:
    modules = package_modules()
    imports: list[Import] = []
    for name, (path, is_package) in modules.items():
        package = name if is_package else name.rpartition(".")[0]

        def add(target: str, lazy: bool, line: int) -> None:
            # `import a.b.c` runs a/__init__, a/b/__init__, then a/b/c.
            # An enclosing package of the importer is already running: only
            # an explicit import of it counts.
            parts = target.split(".")
            for i in range(1, len(parts) + 1):
                prefix = ".".join(parts[:i])
                implicit = i < len(parts) and name.startswith(prefix + ".")
                if prefix in modules and prefix != name and not implicit:
                    imports.append(Import(name, prefix, lazy, line))

        def visit(node: ast.AST, lazy: bool) -> None:
            for child in ast.iter_child_nodes(node):
                if _is_type_checking(child):
                    for sub in child.orelse:
                        visit(sub, lazy)
                    continue
                if isinstance(child, ast.Import):
                    for alias in child.names:
                        add(alias.name, lazy, child.lineno)
                elif isinstance(child, ast.ImportFrom):
                    if child.level:
                        base = package.split(".")[: len(package.split(".")) - child.level + 1]
                        source = ".".join(base + ([child.module] if child.module else []))
                    else:
                        source = child.module or ""
                    for alias in child.names:
                        submodule = f"{source}.{alias.name}"
                        add(submodule if submodule in modules else source, lazy, child.lineno)
                inner = lazy or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
                visit(child, inner)

        visit(ast.parse(path.read_text(), str(path)), False)
    return set(modules), imports


def strongly_connected(nodes: set[str], edges: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm (iterative): the components, each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components = []
    counter = 0
    for root in sorted(nodes):
        if root in index:
            continue
        work = [(root, iter(sorted(edges.get(root, ()))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, successors = work[-1]
            advanced = False
            for succ in successors:
                if succ not in index:
                    index[succ] = low[succ] = counter
                    counter += 1
                    stack.append(succ)
                    on_stack.add(succ)
                    work.append((succ, iter(sorted(edges.get(succ, ())))))
                    advanced = True
                    break
                if succ in on_stack:
                    low[node] = min(low[node], index[succ])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                components.append(sorted(component))
    return components


# The layers, lowest first. A module may import its own layer and the ones
# listed before it, never one after it (see docs/CONVENTIONS.md). A module
# named in no layer counts as base: a new leaf helper needs no entry, one
# that imports an upper layer fails until it is placed. The package
# `adpasses` itself is in none: its lazy names point at the API on purpose.
def _in(*names: str):  # type: ignore[no-untyped-def]
    return lambda m: any(m == n or m.startswith(n + ".") for n in names)


# Each stage is a package (docs/CONVENTIONS.md, "Layout").
BASE = ("adpasses.core", "adpasses.dialects", "adpasses.ops", "adpasses.transforms.lower_affine",
        "adpasses.transforms.gradient_marks")
ANALYSES = ("adpasses.analysis", "adpasses.cache")
REVERSE_BUILDER = ("adpasses.reverse", "adpasses.forward", "adpasses.transforms")
LOWERING = ("adpasses.lowering",)
JIT = ("adpasses.native",)
API = ("adpasses.api", "adpasses.frontend", "adpasses.tools")

LAYERS = [
    ("base", _in(*BASE)),
    ("analyses", _in(*ANALYSES)),
    ("reverse builder", _in(*REVERSE_BUILDER)),
    ("lowering", _in(*LOWERING)),
    ("jit", _in(*JIT)),
    ("api", _in(*API)),
]


def layer_of(module: str) -> int | None:
    if module == "adpasses":
        return None  # the package's lazy names point at the API on purpose
    for rank, (_, member) in enumerate(LAYERS):
        if member(module):
            return rank
    return 0


def test_graph_sees_the_package() -> None:
    nodes, imports = import_graph()
    assert {"adpasses.analysis.activity", "adpasses.dialects.ad", "adpasses.frontend",
            "adpasses.tools.ad_opt", "adpasses.reverse.rules.scf"} <= nodes
    pairs = {(i.importer, i.imported, i.lazy) for i in imports}
    assert ("adpasses.reverse.rules", "adpasses.ops", False) in pairs  # from adpasses.ops import (...)
    assert ("adpasses.api.functions", "adpasses.frontend", True) in pairs  # inside a function
    assert layer_of("adpasses.reverse.rules.scf") == 2 and layer_of("adpasses.lowering.core") == 3


def test_no_import_cycles() -> None:
    nodes, imports = import_graph()
    edges: dict[str, set[str]] = {}
    for imp in imports:
        if not imp.lazy:
            edges.setdefault(imp.importer, set()).add(imp.imported)
    cycles = [c for c in strongly_connected(nodes, edges) if len(c) > 1]
    detail = [
        "{" + ", ".join(c) + "}: "
        + "; ".join(str(i) for i in imports if not i.lazy and i.importer in c and i.imported in c)
        for c in cycles
    ]
    assert not cycles, "import cycles (module level):\n" + "\n".join(detail)


def test_imports_go_down_the_layers() -> None:
    _, imports = import_graph()
    upward = []
    for imp in imports:
        src, dst = layer_of(imp.importer), layer_of(imp.imported)
        if src is not None and dst is not None and dst > src:
            placed = any(member(imp.importer) for _, member in LAYERS)
            note = "" if placed else " [not in LAYERS, so counted as base: place it]"
            upward.append(f"{imp} ({LAYERS[src][0]} imports {LAYERS[dst][0]}){note}")
    assert not upward, "imports against the layering:\n" + "\n".join(sorted(set(upward)))


def test_strongly_connected_finds_a_cycle() -> None:
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    components = strongly_connected({"a", "b", "c", "d"}, edges)
    assert ["a", "b", "c"] in components and ["d"] in components


def test_no_cycles_through_lazy_imports() -> None:
    """A function-level import that closes a cycle hides it rather than
    removing it. Allowed only inside one package: a package's table that
    loads its own members on first use (`rules.rule_table`, the lowering's
    op tables)."""
    nodes, imports = import_graph()
    edges: dict[str, set[str]] = {}
    for imp in imports:
        edges.setdefault(imp.importer, set()).add(imp.imported)

    def package(module: str) -> str:
        return module if package_modules()[module][1] else module.rpartition(".")[0]

    hidden = []
    for component in strongly_connected(nodes, edges):
        if len(component) > 1 and len({package(m) for m in component}) > 1:
            inside = [str(i) for i in imports if i.importer in component and i.imported in component]
            hidden.append("{" + ", ".join(component) + "}:\n    " + "\n    ".join(sorted(set(inside))))
    assert not hidden, "import cycles (lazy imports included):\n" + "\n".join(hidden)


def test_every_module_is_in_a_stage_package() -> None:
    """The tree reads in the order the data flows: no module sits loose in
    `adpasses/` beside the stage packages (only the package's `__init__`)."""
    loose = [name for name, (_, is_package) in package_modules().items()
             if name.count(".") == 1 and name.startswith("adpasses.") and not is_package
             and not any(name.startswith(p) for p in ("adpasses.dialects", "adpasses.frontend",
                                                       "adpasses.tools"))]
    assert not loose, f"modules outside a stage package: {loose}"
    unplaced = [name for name in package_modules()
                if name != "adpasses" and not any(member(name) for _, member in LAYERS)]
    assert not unplaced, f"modules in no layer: {unplaced}"


def test_the_fuzzer_is_not_on_the_runtime_import_path() -> None:
    """The fuzzer is a tool: nothing the API, the JIT or ad-opt/ad-run import
    reaches it, even lazily."""
    _, imports = import_graph()
    edges: dict[str, set[str]] = {}
    for imp in imports:
        edges.setdefault(imp.importer, set()).add(imp.imported)
    seen, todo = set(), ["adpasses", "adpasses.api.functions", "adpasses.tools.ad_opt",
                         "adpasses.tools.ad_run"]
    while todo:
        module = todo.pop()
        if module not in seen:
            seen.add(module)
            todo.extend(edges.get(module, ()))
    assert not any(m.startswith("adpasses.tools.fuzz") for m in seen), \
        sorted(m for m in seen if m.startswith("adpasses.tools.fuzz"))


def test_no_stage_package_hides_a_public_name() -> None:
    """`adpasses.jit` is the decorator: a subpackage of the same name would
    replace it as an attribute of `adpasses` once anything imported it."""
    import adpasses

    public = set(adpasses.__all__)
    packages = {name.split(".")[1] for name, (_, is_package) in package_modules().items()
                if is_package and name.count(".") == 1}
    assert not public & packages, public & packages


def test_old_module_paths_still_import() -> None:
    """Scripts written against the flat layout keep working: each old path
    is the module at its new place (the same object), not a copy."""
    import importlib

    import adpasses

    for old, new in adpasses._MOVED.items():
        if old == "fuzz":
            continue  # a tool: importing it here would load the fuzzer
        assert importlib.import_module(f"adpasses.{old}") is importlib.import_module(f"adpasses.{new}")
    from adpasses.llvm_jit import compile_module  # the form the reproducers use

    assert compile_module is adpasses.compile_module
