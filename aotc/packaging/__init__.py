"""From traced programs to something a user imports: wheels' extension modules, and JIT.

:mod:`.build` turns ``[tool.aotc]`` modules into setuptools extensions (objects from
:mod:`.objects`, up-to-date stamps from :mod:`.uptodate`, the shared
:mod:`.object_cache`); :mod:`.wrapper` renders the Cython wrapper from
:mod:`.wrapper_model` and :mod:`.call_tables`; :mod:`.gufunc` and :mod:`.ufunc_loops`
export kernels as NumPy ufuncs; :mod:`.staging` is ``aotc.jit``'s driver;
:mod:`.checks` and :mod:`.slow_paths` run a kernel's argument checks uncompiled;
:mod:`.weak_scalars` the strong twins of weak scalar parameters; :mod:`.argument_order`
and :mod:`.loop_calls` what the wrapper must know of a program.
"""
