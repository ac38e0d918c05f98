"""The supported-API table in docs/ is generated, and must match the code."""

import functools
import re
from pathlib import Path

import numpy as np

from aotc.supported import markdown


def test_docs_table_is_current():
    doc = Path(__file__).resolve().parents[1] / "docs" / "supported-numpy-api.md"
    assert doc.read_text() == markdown(), "run: python -m aotc.supported > " + str(doc)


def test_table_lists_each_group():
    text = markdown()
    for name in ["np.exp", "np.cumsum", "np.linalg.norm", "np.linspace", ".reshape()",
                 "np.concatenate", "np.argmax", "np.nanmean", "np.nonzero"]:
        assert f"`{name}`" in text, name


def test_every_listed_name_is_numpys():
    """Each ``np.…`` entry names a real NumPy attribute (``np.fft.fft2``, not ``np.fft2``)."""
    names = set(re.findall(r"`(np\.[A-Za-z0-9_.]+?)(?:\(\))?`", markdown()))
    missing = []
    for name in sorted(names):
        try:
            functools.reduce(getattr, name.split(".")[1:], np)
        except AttributeError:
            missing.append(name)
    assert not missing
    assert "np.fft.rfft" in names and "np.lib.stride_tricks.sliding_window_view" in names
