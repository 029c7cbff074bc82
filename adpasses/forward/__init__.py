"""Forward mode: the tangent engine (`tangent.TangentBuilder`) and its rule
tables (`rules/`, one per dialect; scalar ops' rules derive from the op
table). docs/forward_mode.md."""
