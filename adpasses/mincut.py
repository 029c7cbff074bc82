"""Minimum s-t cut on a small directed graph with real capacities.

Edmonds-Karp (shortest augmenting paths). The graphs of cache planning have
one or two nodes per value of a loop body, so tens to hundreds of nodes.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Hashable

INF = float("inf")


class FlowGraph:
    def __init__(self) -> None:
        self.capacity: dict[Hashable, dict[Hashable, float]] = {}

    def add_edge(self, u: Hashable, v: Hashable, cap: float) -> None:
        if cap <= 0:
            return
        self.capacity.setdefault(u, {})
        self.capacity.setdefault(v, {})
        self.capacity[u][v] = self.capacity[u].get(v, 0.0) + cap
        self.capacity[v].setdefault(u, 0.0)

    def source_side(self, s: Hashable, t: Hashable) -> set[Hashable]:
        """Nodes reachable from `s` in the residual graph after a maximum
        flow: the source side of a minimum cut."""
        residual = {u: dict(vs) for u, vs in self.capacity.items()}
        residual.setdefault(s, {})
        residual.setdefault(t, {})
        while True:
            parent = self._bfs(residual, s, t)
            if t not in parent:
                return set(parent)
            path: list[tuple[Hashable, Hashable]] = []
            v = t
            while v != s:
                u = parent[v]
                path.append((u, v))
                v = u
            push = min(residual[u][v] for u, v in path)
            if push == INF:
                raise ValueError("no finite cut separates the needed values from the source")
            for u, v in path:
                residual[u][v] -= push
                residual[v][u] = residual[v].get(u, 0.0) + push

    @staticmethod
    def _bfs(residual, s, t) -> dict:  # type: ignore[no-untyped-def]
        parent = {s: s}
        queue = deque([s])
        while queue:
            u = queue.popleft()
            for v, cap in residual[u].items():
                if cap > 1e-12 and v not in parent:
                    parent[v] = u
                    if v == t:
                        return parent
                    queue.append(v)
        return parent
