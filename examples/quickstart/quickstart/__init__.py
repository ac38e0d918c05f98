"""quickstart: a downstream project whose kernels aotc compiles into its wheel."""
