"""`ad-opt --verify-diagnostics` with MLIR's `expected-error` annotations.

As in mlir-opt, an input (or each `// -----` part of it, with
`--split-input-file`) says which errors it must produce:

    // expected-error @+1 {{recursive call}}
    %r = func.call @f(%x) : (f64) -> f64

`@+N` / `@-N` count lines from the comment, `@above` / `@below` are -1 /
+1, and no `@` means the comment's own line; the text in `{{...}}` must
occur in the message. ad-opt stops at the first error of a part, so a
part holds at most one `expected-error`. The run succeeds (exit 0, no
output) when every part produced exactly the error it expects at the line
it names, and a part without annotation produced none; otherwise each
mismatch is one line `file:line: error: ...` and the exit status is 1.
Without any `expected-error` in the input, `--verify-diagnostics` keeps
xDSL's meaning (print the error, exit 0) and this module is not used.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

EXPECTED = re.compile(r"//\s*expected-(error|warning|remark|note)\s*(?:@(above|below|[+-]\d+))?\s*\{\{(.*?)\}\}")


@dataclass(frozen=True)
class Expected:
    line: int  # 1-based, in the whole file
    text: str
    comment_line: int


def expectations(text: str, line_offset: int) -> list[Expected]:
    """The `expected-error` annotations of one part (lines numbered in the file)."""
    found = []
    for k, line in enumerate(text.splitlines(), start=1 + line_offset):
        for m in EXPECTED.finditer(line):
            kind, where, message = m.groups()
            if kind != "error":
                continue  # ad-opt reports errors only
            shift = {None: 0, "above": -1, "below": 1}.get(where)
            found.append(Expected(k + (shift if shift is not None else int(where)), message, k))
    return found


def has_expectations(text: str) -> bool:
    return EXPECTED.search(text) is not None


def check_part(name: str, expected: list[Expected], run: Callable[[], None],
               describe: Callable[[BaseException], str]) -> list[str]:
    """Run one part; the mismatches between the error it raised (if any)
    and `expected`, as one-line diagnostics (`describe`: ad-opt's one line
    for an error)."""
    problems: list[str] = []
    for extra in expected[1:]:
        problems.append(f"{name}:{extra.comment_line}: error: more than one expected-error in one part: "
                        "ad-opt stops at the first error; split the input with `// -----`")
    try:
        run()
    except Exception as err:  # noqa: BLE001 - every error is a diagnostic to compare
        text = describe(err)
        m = re.match(r".*?:(\d+):\d+: error: (.*)$", text)
        line, message = (int(m.group(1)), m.group(2)) if m else (None, text)
        want = expected[0] if expected else None
        if want is None:
            problems.append(f"unexpected error: {text}")
        elif line != want.line:
            problems.append(f"{name}:{want.comment_line}: error: expected error at line {want.line}, "
                            f"got it at line {line}: {text}")
        elif want.text not in message:
            problems.append(f"{name}:{want.comment_line}: error: expected error \"{want.text}\", "
                            f"got: {text}")
        return problems
    if expected:
        want = expected[0]
        problems.append(f"{name}:{want.comment_line}: error: expected error \"{want.text}\" "
                        f"(at line {want.line}) was not produced")
    return problems
