"""Code generation tests: programs compiled in-process and compared with NumPy."""
