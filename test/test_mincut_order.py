"""The cut edges of a minimum cut come in the order the edges were added,
not in the order of a set of nodes (which follows their hashes: object ids
for SSA values, so the cache report's explanations changed from run to run)."""

from adpasses.cache.mincut import FlowGraph


class Node:
    """A node whose hash puts it in a set in the reverse of its number."""

    def __init__(self, k: int):
        self.k = k

    def __hash__(self) -> int:
        return 100 - self.k

    def __repr__(self) -> str:
        return f"n{self.k}"


def test_cut_edges_in_insertion_order():
    nodes = [Node(k) for k in range(6)]
    assert [n.k for n in set(nodes)] != list(range(6))  # the set's order is not insertion order
    g = FlowGraph()
    s, t = "S", "T"
    for n in nodes:
        g.add_edge(s, n, 1.0 + n.k)   # cheap to cut
        g.add_edge(n, t, 100.0)
    # every node is on the sink side: the cut is the S -> n edges, in order
    assert list(g.min_cut(s, t).edges) == [(s, n) for n in nodes]
    side = set(nodes) | {s}
    g2 = FlowGraph()
    for n in nodes:
        g2.add_edge(n, t, 1.0)
    assert list(g2.cut_edges(side)) == [(n, t) for n in nodes]
