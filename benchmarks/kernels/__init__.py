"""One module per benchmark kernel. Each defines `KEY`, `TITLE` and
`run(ctx) -> list[Row]`; our version of the kernel is a plain Python
function compiled with adpasses.jit, the peers' versions sit beside it."""
