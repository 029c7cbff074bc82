"""The gradient builder: the forward and reverse sweeps of one gradient
function, written through reverse contexts with the per-dialect rules."""
