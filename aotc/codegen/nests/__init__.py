"""Loop nests beyond one elementwise map: fusion groups, reductions, indexing, control.

:mod:`.fusion` (planned by :mod:`.fusion_plan`, reducing through :mod:`.fusion_reduce`)
lowers a whole fusion group as one nest; :mod:`.epilogue` is the rule for ``fusion``
equations, including those headed by a matrix product; :mod:`.reductions` and
:mod:`.pairwise` are reductions and scans; :mod:`.indexing` is data-dependent indexing and
value errors; :mod:`.control` is ``for_loop``/``while_loop``/``scan``/``cond``.
"""
