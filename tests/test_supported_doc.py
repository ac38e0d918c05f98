"""The supported-API table in docs/ is generated, and must match the code."""

from pathlib import Path

from aotc.supported import markdown


def test_docs_table_is_current():
    doc = Path(__file__).resolve().parents[1] / "docs" / "supported-numpy-api.md"
    assert doc.read_text() == markdown(), "run: python -m aotc.supported > " + str(doc)


def test_table_lists_each_group():
    text = markdown()
    for name in ["np.exp", "np.cumsum", "np.linalg.norm", "np.linspace", ".reshape()",
                 "np.concatenate", "np.argmax", "np.nanmean", "np.nonzero"]:
        assert f"`{name}`" in text, name
