"""Templates of the generated Cython wrapper, C header and .pyi stub, and ``runtime.py``,
the wrapper's slow paths in plain Python, which each generated module embeds and runs;
``numpy_c.pxd``, the part of NumPy's C API the wrapper uses, declared for Cython.

Rendered by :mod:`aotc.packaging.wrapper` with :class:`string.Template`; installed as
``aotc.templates`` so the build backend finds them inside an isolated build environment.
"""
