"""The stamp that lets ``python -m aotc build`` skip a build with nothing changed: it must
change with every file a build reads (no C toolchain here)."""

from __future__ import annotations

from pathlib import Path

from aotc import config
from aotc.packaging import uptodate
from aotc.packaging.wrapper import template_dir


def _project(root: Path) -> config.Config:
    (root / "pkg").mkdir()
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "kernels.py").write_text("import aotc\n")
    (root / "pkg" / "helpers.py").write_text("SCALE = 2.0\n")
    (root / "pyproject.toml").write_text('[tool.aotc]\nmodules = ["pkg.kernels"]\n')
    cfg = config.load(root)
    assert cfg is not None
    return cfg


def test_the_stamp_reads_every_template_and_runtime_file(tmp_path: Path) -> None:
    files = set(uptodate._files(tmp_path, _project(tmp_path)))
    shipped = [p for p in template_dir().iterdir() if p.suffix in (".in", ".py")]
    assert template_dir() / "runtime.py" in shipped  # embedded in every module
    assert set(shipped) <= files


def test_the_stamp_changes_with_the_kernels_package_and_the_config(tmp_path: Path) -> None:
    cfg = _project(tmp_path)
    before = uptodate.stamp(tmp_path, cfg)
    assert uptodate.stamp(tmp_path, cfg) == before
    helpers = tmp_path / "pkg" / "helpers.py"
    helpers.write_text("SCALE = 3.0\n")  # a helper the kernels import
    edited = uptodate.stamp(tmp_path, cfg)
    assert edited != before
    assert uptodate.stamp(tmp_path, config.replace(cfg, opt_level=1)) != edited


def test_a_missing_extension_is_never_up_to_date(tmp_path: Path) -> None:
    cfg = _project(tmp_path)
    uptodate.record(tmp_path, cfg)
    extension = tmp_path / "pkg" / "kernels.so"
    assert not uptodate.up_to_date(tmp_path, cfg, {"pkg.kernels": []})
    assert uptodate.up_to_date(tmp_path, cfg, {"pkg.kernels": [extension]})
