"""Sorting: rows of an axis through per-dtype helper functions.

:mod:`.lowering` holds the rules (``sort``, ``argsort``, ``searchsorted``); :mod:`.radix`
(with :mod:`.digits`, :mod:`.sortkeys`, :mod:`.floatruns`) is the stable LSD radix sort;
:mod:`.quicksort` (with :mod:`.partition`, :mod:`.networks`, :mod:`.sortnet`) is the
vectorized quicksort where the target has wide registers; :mod:`.rows` is one row's frame.
"""
