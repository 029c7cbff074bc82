# lit configuration for adpasses: FileCheck tests of ad-opt, ad-run and the
# Python API. Tools are found next to the Python that runs lit, so the suite
# works from an activated venv and from `venv/bin/lit` alike.
import os
import shutil
import sys

import lit.formats

config.name = "adpasses"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".py"]
config.excludes = ["lit.cfg.py", "Inputs"]
config.test_source_root = os.path.dirname(__file__)

bindir = os.path.dirname(sys.executable)
config.environment["PATH"] = bindir + os.pathsep + config.environment.get("PATH", os.environ.get("PATH", ""))
for var in ("HOME", "TMPDIR", "PYTHONPATH"):
    if var in os.environ:
        config.environment[var] = os.environ[var]


def _tool(name):
    found = shutil.which(name, path=config.environment["PATH"])
    if found is None:
        lit_config.fatal(f"{name} not found next to {sys.executable}: run `pip install -e .[test]`")
    return found


config.substitutions.append(("%python", sys.executable))
for tool in ("ad-opt", "ad-run", "filecheck"):
    config.substitutions.append((f"{tool} ", _tool(tool) + " "))

try:
    lit_config.maxIndividualTestTime = 120
except Exception:  # noqa: BLE001 - older lit without timeouts
    pass

# The reverse pipeline's steps as one -p spec (adpasses/transforms/reverse_pipeline.py),
# so that RUN lines that run them one by one follow its one definition.
from adpasses.transforms.reverse_pipeline import ReverseOptions, reverse_spec  # noqa: E402

config.substitutions.append(("%{reverse_steps_no_simplify}", reverse_spec(ReverseOptions(simplify=False))))
config.substitutions.append(("%{reverse_steps}", reverse_spec(ReverseOptions())))

# libmvec's vector math (adpasses/native/vector_math.py): on x86-64 glibc.
from adpasses.native import vector_math  # noqa: E402

if vector_math.available():
    config.available_features.add("libmvec")
