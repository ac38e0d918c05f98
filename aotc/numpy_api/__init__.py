"""NumPy's API on tracers: ufuncs, functions, methods, indexing, as decompositions.

Nothing here adds a lowering: each NumPy function is written in terms of the
primitive binders of :mod:`aotc.lax`, with NumPy's own dtype and broadcasting rules.
"""
