"""aotc's own packaging: the wheel must hold every subpackage and every template."""

import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]


def _setuptools_table() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]


def test_every_subpackage_is_listed():
    """A package missing from [tool.setuptools] packages is missing from the wheel, and the
    isolated build of a downstream project then fails with ModuleNotFoundError."""
    listed = set(_setuptools_table()["packages"])
    found = {".".join(p.parent.relative_to(ROOT).parts)
             for base in ("aotc", "build_backend") for p in (ROOT / base).rglob("__init__.py")}
    missing = sorted(found - listed)
    assert not missing, f"add {missing} to [tool.setuptools] packages in pyproject.toml"
    assert "aotc.templates" in listed


def test_templates_ship_as_package_data():
    table = _setuptools_table()
    assert table["package-dir"]["aotc.templates"] == "templates"
    globs = table["package-data"]["aotc.templates"]
    # (runtime.py and __init__.py ship as the package's modules)
    templates = [p for p in (ROOT / "templates").iterdir() if p.suffix == ".in"]
    assert templates
    for path in templates:
        assert any(path.match(g) for g in globs), f"{path.name} is not in package-data"
