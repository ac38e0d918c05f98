"""Templates of the generated Cython wrapper, C header and .pyi stub (data, no logic).

Rendered by :mod:`aotc.wrapper` with :class:`string.Template`; installed as
``aotc.templates`` so the build backend finds them inside an isolated build environment.
"""
