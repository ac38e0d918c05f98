"""``python -m aotc``: see :mod:`aotc.cli`."""

import sys

from .cli import main

sys.exit(main())
