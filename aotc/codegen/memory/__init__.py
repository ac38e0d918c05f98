"""Buffer planning: where every value lives, and which writes happen in place.

:mod:`.inplace` (with :mod:`.planner` and :mod:`.trades`) decides the in-place updates and
the buffers loops and branches share; :mod:`.layout` turns that into homes (outputs,
64-byte scratch slots, the caller's arrays); :mod:`.argwrites` computes values straight
into an argument; :mod:`.overlap` guards writes into caller arrays; :mod:`.workspace`
plans the work buffers a lowering needs; :mod:`.viewkinds` and :mod:`.views` are the view
primitives (index maps without loops); :mod:`.rowcopy` copies rows with ``memmove``.
"""
