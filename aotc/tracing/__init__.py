"""Tracing: running a converted kernel on abstract values to record its program.

:mod:`.kernel` (``trace_kernel``) drives it; :mod:`.avals` are the abstract types,
:mod:`.tracer` the tracers and the trace context, :mod:`.bind` the primitive binders,
:mod:`.guards` and :mod:`.derived` the size checks and sizes computed before the kernel
runs, :mod:`.bodies`, :mod:`.control` and :mod:`.aliases` loop bodies and branches as
nested programs, :mod:`.argtypes` the types of arguments given at call time,
:mod:`.messages` runtime values in exception messages.
"""
