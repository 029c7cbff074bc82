"""The Python API (`jit`, `grad`, `value_and_grad`, `autodiff`, markers) in
`functions`, with the per-call fast paths; `adpasses` re-exports it."""
