"""Internal helpers shared by every layer: thread count, build facts, C declarations."""
