"""Running a snippet or a tool in a fresh process, for safety tests whose
failure mode is a crash or a hang of the interpreter."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from dataclasses import dataclass

HERE = os.path.dirname(os.path.abspath(__file__))
INPUTS = os.path.join(HERE, "inputs")


@dataclass
class Isolated:
    returncode: int
    stdout: str
    stderr: str

    @property
    def crashed(self) -> bool:
        """Killed by a signal (segfault, abort) rather than exiting."""
        return self.returncode < 0

    def __str__(self) -> str:
        return f"exit {self.returncode}\n--- stdout\n{self.stdout}\n--- stderr\n{self.stderr}"


def run_isolated(code: str, *, timeout: float = 120, env: dict[str, str] | None = None,
                 cwd: str | None = None) -> Isolated:
    """Run `code` (dedented) in a fresh interpreter of this venv; the test
    helpers folder and this folder are importable."""
    full_env = dict(os.environ)
    paths = [HERE, os.path.dirname(HERE)]
    full_env["PYTHONPATH"] = os.pathsep.join(paths + [full_env.get("PYTHONPATH", "")])
    full_env["PYTHONFAULTHANDLER"] = "1"
    if env:
        full_env.update(env)
    try:
        p = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                           text=True, timeout=timeout, env=full_env, cwd=cwd or HERE)
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        err = e.stderr.decode() if isinstance(e.stderr, bytes) else (e.stderr or "")
        return Isolated(-999, out, err + f"\n[timed out after {timeout} s]")
    return Isolated(p.returncode, p.stdout, p.stderr)


def run_tool(tool: str, *args: str, timeout: float = 120, stdin: str | None = None) -> Isolated:
    """Run `ad-opt` / `ad-run` of this venv."""
    exe = os.path.join(os.path.dirname(sys.executable), tool)
    try:
        p = subprocess.run([exe, *args], capture_output=True, text=True, timeout=timeout,
                           input=stdin)
    except subprocess.TimeoutExpired:
        return Isolated(-999, "", f"[timed out after {timeout} s]")
    return Isolated(p.returncode, p.stdout, p.stderr)
