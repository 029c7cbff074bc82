"""Cache planning: how each primal value the reverse sweep reads gets there
(reused, recomputed, reloaded or taped), its cost model, and the report."""
