"""Entry points for tests and benchmarks only (not the library's API): the kernels and
the growth components' C-level operations, with their arguments checked."""
