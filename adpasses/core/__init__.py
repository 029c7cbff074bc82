"""What every stage uses: the dialect registry and MLIR parsing (`context`),
the errors users see (`diagnostics`), facts about IR and types, verification,
and the compile thread and locks."""
