"""Analyses of the primal IR: activity (what carries derivatives), memory
objects and views, what each op writes, and alias analysis (what overwrites
what a load read). They never import the reverse builder."""
