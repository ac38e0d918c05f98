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
    templates = [p for p in (ROOT / "templates").iterdir() if p.is_file() and p.suffix != ".py"]
    assert templates
    for path in templates:
        assert any(path.match(g) for g in globs), f"{path.name} is not in package-data"


def test_the_setuptools_entry_point_costs_nothing_without_tool_aotc(tmp_path: Path) -> None:
    """setuptools runs aotc's entry point in every project's build: one without
    [tool.aotc] imports neither aotc nor NumPy (it imported 167 modules before)."""
    import subprocess

    entry = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"]
    target = entry["setuptools.finalize_distribution_options"]["aotc"]
    assert target == "build_backend.entry:finalize_distribution_options"
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'plain'\n[tool.black]\n")
    probe = ("import sys; from build_backend.entry import finalize_distribution_options as f\n"
             "class Dist: ext_modules = None\n"
             "d = Dist(); f(d)\n"
             "print(sorted(m for m in ('aotc', 'numpy', 'setuptools') if m in sys.modules),"
             " d.ext_modules)")
    done = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True,
                          text=True, env={"PYTHONPATH": str(ROOT)}, check=True)
    assert done.stdout.split() == ["[]", "None"]
