"""Forward (tangent) rule of the matrix product `linalg.matmul ins(%A, %B)
outs(%C)` on memrefs (C += A @ B), at the level of matrices:

    dC += dA @ B + A @ dB

per lane, one `linalg.matmul` for each operand whose memory carries
derivatives, into C's tangent (whose old contents are C's old tangent),
after the primal product. They are lowered like the primal's
(`transforms/lower_matmul.py`: BLAS above the size threshold, a loop nest
below).
"""

from __future__ import annotations

from xdsl.dialects.linalg import ops as linalg


class MatmulRule:
    def forward(self, fb, op: linalg.MatmulOp) -> None:  # type: ignore[no-untyped-def]
        new = fb.clone(op)
        (c,) = op.outputs
        targets = fb.memory_tangent(c, op)
        if targets is None:
            return
        a, b = op.inputs
        new_a, new_b = new.inputs
        ta, tb = fb.memory_tangent(a, op), fb.memory_tangent(b, op)
        for k, target in enumerate(targets):
            if ta is not None:
                fb.insert(linalg.MatmulOp([ta[k], new_b], [target])).location = op.location
            if tb is not None:
                fb.insert(linalg.MatmulOp([new_a, tb[k]], [target])).location = op.location


RULES = {linalg.MatmulOp: MatmulRule()}
