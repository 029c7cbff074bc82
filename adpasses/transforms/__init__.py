"""adpasses' passes, one module per pass; `registry` names them for `ad-opt -p`."""
