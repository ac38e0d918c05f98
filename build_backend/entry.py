"""setuptools' ``finalize_distribution_options`` entry point, free for other projects.

setuptools runs every installed distribution's entry point on every build, aotc's
included: importing ``aotc`` for it loaded NumPy and 160-odd modules into the build of
any project at all. This module reads only ``pyproject.toml`` (with the standard
library's TOML parser), and loads aotc when the project has a ``[tool.aotc]`` table.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib


def uses_aotc(root: Path) -> bool:
    """Whether the project at ``root`` has ``[tool.aotc]`` (an unreadable pyproject.toml
    counts: aotc's own reading then reports it, with the location)."""
    path = root / "pyproject.toml"
    if not path.is_file():
        return False
    try:
        with path.open("rb") as f:
            tool = tomllib.load(f).get("tool")
    except (OSError, tomllib.TOMLDecodeError):
        return True
    return isinstance(tool, dict) and "aotc" in tool


def finalize_distribution_options(dist: Any) -> None:
    """Hand the distribution to :func:`aotc.packaging.build.finalize_distribution_options` when the
    project uses aotc; do nothing, and import nothing more, otherwise."""
    if not uses_aotc(Path.cwd()):
        return
    from aotc.packaging.build import finalize_distribution_options as add_kernel_modules

    add_kernel_modules(dist)
