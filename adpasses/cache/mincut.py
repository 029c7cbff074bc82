"""Minimum s-t cut on a small directed graph with real capacities.

Edmonds-Karp (shortest augmenting paths). The graphs of cache planning have
one or two nodes per value of a loop body, so tens to hundreds of nodes.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Hashable
from functools import cached_property

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
        return self.min_cut(s, t).source_side

    def min_cut(self, s: Hashable, t: Hashable) -> MinCut:
        residual = {u: dict(vs) for u, vs in self.capacity.items()}
        residual.setdefault(s, {})
        residual.setdefault(t, {})
        return MinCut(self, s, t, self._augment(residual, s, t), residual)

    def cut_edges(self, side: set[Hashable]) -> dict[tuple[Hashable, Hashable], float]:
        """The edges from `side` to the other nodes, with their capacities,
        in the order the edges were added (not the set's, which follows
        object ids: the cache report lists them in this order)."""
        return {(u, v): cap for u, vs in self.capacity.items() if u in side for v, cap in vs.items()
                if cap > 0 and v not in side}

    def _augment(self, residual: dict, s: Hashable, t: Hashable) -> set[Hashable]:
        """Push flow along shortest augmenting paths until none is left;
        return the nodes still reachable from `s`."""
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


class MinCut:
    """A minimum cut and the residual graph of its maximum flow (kept to
    ask, cheaply, what the best cut with one more node forced to the sink
    side would be)."""

    def __init__(self, graph: FlowGraph, s: Hashable, t: Hashable, source_side: set[Hashable],
                 residual: dict):
        self.graph, self.s, self.t = graph, s, t
        self.source_side = source_side
        self._residual = residual

    @cached_property
    def edges(self) -> dict[tuple[Hashable, Hashable], float]:
        """The cut edges and their capacities (what the cut pays for)."""
        return self.graph.cut_edges(self.source_side)

    def forcing_to_sink(self, node: Hashable) -> MinCut:
        """The minimum cut with `node` on the sink side: the flow so far,
        continued with an infinite edge node -> t (a few more augmenting
        paths, not a new maximum flow). ValueError if every such cut is
        infinite."""
        residual = {u: dict(vs) for u, vs in self._residual.items()}
        residual[node][self.t] = INF
        residual[self.t].setdefault(node, 0.0)
        return MinCut(self.graph, self.s, self.t, self.graph._augment(residual, self.s, self.t), residual)
