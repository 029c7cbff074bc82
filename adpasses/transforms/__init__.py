"""adpasses' passes, one module per pass (see adpasses.passes for the names)."""
