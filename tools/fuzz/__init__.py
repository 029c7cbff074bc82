"""Differential testing of adpasses: random programs, an independent oracle,
finite differences, and shrinking of failures (docs/fuzzing.md).

- `generate.generate(seed)`: a random valid program (`program.Program`);
- `to_mlir.mlir_function(p)` / `to_python.Oracle(p)`: its two versions;
- `check.check_program(p)`: compile, run and compare -> `check.Outcome`;
- `runner.run_seeds(...)`: many seeds in worker processes (crash isolation);
- `shrink.shrink(p, ...)`: a minimal program failing the same way;
- `reproducer.lit_test(p)`: a self-checking `ad-run` lit test.

`python -m adpasses.tools.fuzz --seeds N` runs it from the command line.
"""
