"""Work split over the runtime's threads (``[tool.aotc] parallel``).

:mod:`.loops` outlines a loop into a function the runtime's ``parallel_for`` hook runs;
:mod:`.nest` splits a fused nest's outermost loop, :mod:`.gemm` a large matrix product's
rows of ``C``.
"""
