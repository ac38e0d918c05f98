"""NumPy's and Python's random draws over MT19937, transcribed bit for bit.

:mod:`.lowering` holds the rules; :mod:`.mt19937` is the generator's state and words;
:mod:`.numpy_draws`, :mod:`.binomial`, :mod:`.gamma` and :mod:`.continuous` are NumPy's
legacy distributions, :mod:`.python_draws` CPython's ``random``.
"""
