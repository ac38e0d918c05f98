"""Linear algebra: ``dot_general`` and the calls of NumPy's own LAPACK and FFT loops.

:mod:`.dot_general` picks the path per shape; :mod:`.gemm` is the GotoBLAS five-loop
driver over :mod:`.gemm_pack`'s panels and :mod:`.gemm_kernel`'s micro-kernel;
:mod:`.gemm_small`, :mod:`.gemm_rows` and :mod:`.gemm_dot` are the small, few-row and
matrix-vector products; :mod:`.external` calls NumPy's gufunc loops (``numpy_loop``).
"""
