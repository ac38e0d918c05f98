"""Elementwise primitives on one element, and the loop nests that map them.

:mod:`.scalar` holds ``SCALAR_RULES`` with :mod:`.division`, :mod:`.convert` and
:mod:`.mathlib` for what NumPy defines unusually, :mod:`.complexarith`,
:mod:`.complexmath` and :mod:`.complexfuncs` for complex values; :mod:`.nests` emits the
nests that materialize elementwise maps, ``iota`` and copies.
"""
