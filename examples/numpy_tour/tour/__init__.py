"""Realistic kernels exercising each part of the NumPy API aotc compiles."""
