"""Compiled object code on disk (`jit(cache=True)`; docs/deployment.md).

An entry is one file holding the object code MCJIT generated for a module
and the plain-data description `llvm_jit.load_compiled` rebuilds its
callables from (or any small plain-data record: the facts the API keeps
per signature). Its name is a SHA-256 of everything the code depends on:
what the caller puts in (a function's sources, signature, options) and
`environment_key()`: the versions of adpasses (a fingerprint of its
source files, so an edited compiler never reads old code), xDSL, llvmlite,
LLVM, numpy and Python, and the CPU's name and features.

Files are written whole under a temporary name and renamed into place
(`os.replace`), so processes filling one folder at once never read half a
file; two writers of one key write the same bytes. A file that is short,
corrupt or from another format is ignored (and replaced by the next
writer): a cache never makes a call fail. Entries are `marshal` data
(bytes, strings, numbers, lists, dicts), which loads nothing but data.

Where: `$ADPASSES_CACHE_DIR` if set, else a `__adpasses_cache__` folder
beside the function's source file (like `__pycache__`), else, when that
folder cannot be written, the user's cache folder
(`$XDG_CACHE_HOME/adpasses` or `~/.cache/adpasses`). The process-wide
dispatch code is cached in `$ADPASSES_CACHE_DIR` or the user's folder, once
some function asked for a disk cache.

Nothing here imports xDSL: loading from the cache is llvmlite alone.
"""

from __future__ import annotations

import hashlib
import marshal
import os
import sys
import threading
from collections.abc import Callable
from pathlib import Path

from adpasses.core import log

MAGIC = b"ADPCACHE1"
_DIGEST = 32  # sha256 of the payload, after the magic
FOLDER = "__adpasses_cache__"
ENV_DIR = "ADPASSES_CACHE_DIR"

stats = {"hits": 0, "misses": 0, "writes": 0, "rejected": 0}
_env_key: str | None = None
_runtime_cache = False


# -- the key ---------------------------------------------------------------------------------


def _package_fingerprint() -> str:
    """The adpasses source files (path, size, modification time): an edit to
    the compiler changes every key."""
    import adpasses

    root = Path(adpasses.__file__).resolve().parent
    roots = [root]
    for sub in ("dialects", "frontend"):  # installed as subpackages from top-level folders
        mod = sys.modules.get(f"adpasses.{sub}")
        path = getattr(mod, "__file__", None) if mod else None
        if path is None:
            import importlib.util

            spec = importlib.util.find_spec(f"adpasses.{sub}")
            path = spec.origin if spec else None
        if path:
            roots.append(Path(path).resolve().parent)
    h = hashlib.sha256(adpasses.__version__.encode())
    for r in roots:
        for dirpath, dirnames, filenames in os.walk(r):
            dirnames[:] = sorted(d for d in dirnames if d != "__pycache__" and d != FOLDER)
            for name in sorted(filenames):
                if name.endswith(".py"):
                    st = os.stat(os.path.join(dirpath, name))
                    h.update(f"{os.path.relpath(os.path.join(dirpath, name), r)}:{st.st_size}:"
                             f"{st.st_mtime_ns}\n".encode())
    return h.hexdigest()


def _distribution_version(package: str) -> str:
    """A package's installed version, read from its dist-info folder name
    (importlib.metadata costs tens of ms to import; this, a directory scan)."""
    import importlib.util

    spec = importlib.util.find_spec(package)
    if spec is not None and spec.origin:
        site = Path(spec.origin).resolve().parent.parent
        try:
            for entry in os.scandir(site):
                if entry.name.startswith(f"{package}-") and entry.name.endswith(".dist-info"):
                    return entry.name[len(package) + 1:-len(".dist-info")]
        except OSError:
            pass
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(package)
    except PackageNotFoundError:
        return "unknown"


def environment_key() -> str:
    """What every entry depends on besides its own inputs (once per process)."""
    global _env_key
    if _env_key is None:
        import llvmlite
        import llvmlite.binding as llvm
        import numpy as np

        from adpasses.native import blas, vector_math

        parts = [
            f"format {MAGIC.decode()}",
            f"adpasses {_package_fingerprint()}",
            f"xdsl {_distribution_version('xdsl')}",
            f"llvmlite {llvmlite.__version__} llvm {llvm.llvm_version_info}",
            f"numpy {np.__version__}",
            f"python {sys.version} {sys.implementation.cache_tag}",
            f"target {llvm.get_process_triple()} {llvm.get_host_cpu_name()} "
            f"{llvm.get_host_cpu_features().flatten()}",
            f"vector math {sorted(vector_math.available().items())}",
            f"blas {blas.available()}",
        ]
        _env_key = hashlib.sha256("\n".join(parts).encode()).hexdigest()
    return _env_key


def entry_name(*parts: object) -> str:
    """The file name of the entry for these inputs (with the environment)."""
    h = hashlib.sha256(environment_key().encode())
    for p in parts:
        h.update(b"\0" + repr(p).encode())
    return h.hexdigest()[:40] + ".adc"


# -- where -----------------------------------------------------------------------------------


def _user_folder() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "adpasses"


def _writable(folder: Path) -> bool:
    try:
        folder.mkdir(parents=True, exist_ok=True)
        return os.access(folder, os.W_OK | os.X_OK)
    except OSError:
        return False


def folder_for(source_file: str | None) -> Path | None:
    """The cache folder of functions defined in `source_file`; None if no
    folder can be written (the cache is then off, with a warning in the log)."""
    configured = os.environ.get(ENV_DIR)
    if configured:
        candidates = [Path(configured)]
    else:
        candidates = []
        if source_file and os.path.isfile(source_file):
            candidates.append(Path(source_file).resolve().parent / FOLDER)
        candidates.append(_user_folder())
    for folder in candidates:
        if _writable(folder):
            return folder
    log.warning("no writable cache folder (tried %s): compiled code is not cached on disk",
                ", ".join(map(str, candidates)))
    return None


# -- reading and writing ---------------------------------------------------------------------


def read(path: Path) -> dict | None:
    """The entry at `path`, or None if it is missing, short, corrupt or of
    another format (never an exception)."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None
    head = len(MAGIC) + _DIGEST
    payload = data[head:]
    if data[:len(MAGIC)] != MAGIC or hashlib.sha256(payload).digest() != data[len(MAGIC):head]:
        stats["rejected"] += 1
        log.warning("ignoring the damaged cache file %s (it will be rewritten)", path)
        return None
    try:
        entry = marshal.loads(payload)
    except (ValueError, EOFError, TypeError):
        stats["rejected"] += 1
        return None
    return entry if isinstance(entry, dict) else None


def write(path: Path, entry: dict) -> bool:
    """Write `entry` at `path` atomically (a temporary file renamed into
    place). False, and the cache left as it was, if the folder refuses."""
    payload = marshal.dumps(entry, 4)
    data = MAGIC + hashlib.sha256(payload).digest() + payload
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        # A name no other writer uses: this process and thread.
        tmp = path.parent / f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp"
        try:
            with open(tmp, "wb") as f:
                f.write(data)
            os.replace(tmp, path)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
    except OSError as err:
        log.warning("cannot write the cache file %s: %s", path, err)
        return False
    stats["writes"] += 1
    return True


# -- the process-wide runtime code -----------------------------------------------------------


def enable_runtime_cache() -> None:
    """Cache the process-wide generated code (the dispatch builtins) too:
    called when a function asks for a disk cache."""
    global _runtime_cache
    _runtime_cache = True


def _module_sources(modules: tuple[str, ...]) -> str:
    import importlib.util

    h = hashlib.sha256()
    for name in modules:
        # The file under its top package's folder: find_spec of the module
        # itself would import its parent packages (adpasses.lowering
        # imports xDSL, which loading from the cache must not).
        top, *rest = name.split(".")
        root = os.path.dirname(importlib.util.find_spec(top).origin)  # type: ignore[union-attr, arg-type]
        with open(os.path.join(root, *rest) + ".py", "rb") as f:
            h.update(f.read())
    return h.hexdigest()


def runtime_machine_code(name: str, modules: tuple[str, ...], build_ir: Callable[[], str]):  # type: ignore[no-untyped-def]
    """The MachineCode of a process-wide module (`build_ir()` at O3), whose
    IR is determined by the source of `modules`: from the disk cache when
    enabled (`enable_runtime_cache`), else compiled and, when enabled, stored."""
    from adpasses.native import runtime
    from adpasses.native.llvm_jit import _machine_code, machine_code_of_object

    runtime.register_python_objects()
    path = None
    if _runtime_cache:
        # The configured folder first, then the user's: a process that set
        # $ADPASSES_CACHE_DIR after its runtime was built (or whose parent
        # did) still finds the runtime the user folder holds, instead of
        # compiling it, and importing xDSL, in every worker.
        configured = os.environ.get(ENV_DIR)
        folders = ([Path(configured)] if configured else []) + [_user_folder()]
        entry_file = entry_name("runtime", name, _module_sources(modules))
        for folder in folders:
            entry = read(folder / entry_file)
            if entry is not None and isinstance(entry.get("object"), bytes):
                stats["hits"] += 1
                _runtime_objects[entry_file] = entry["object"]
                return machine_code_of_object(entry["object"])
        stats["misses"] += 1
        path = folders[0] / entry_file
    code, _, object_code = _machine_code(build_ir(), 3)
    if path is not None:
        _runtime_objects[path.name] = object_code
        write(path, {"object": object_code})
    return code


_runtime_objects: dict[str, bytes] = {}
"""This process's runtime modules by entry file name, as object code."""


def share_runtime_with(folder: Path) -> None:
    """Write this process's runtime modules into `folder` where missing: a
    folder of function entries then serves a worker process with everything
    it needs, without compiling (or importing xDSL), even when this process
    built its runtime for another folder."""
    for entry_file, object_code in list(_runtime_objects.items()):
        path = folder / entry_file
        if not path.exists():
            write(path, {"object": object_code})
