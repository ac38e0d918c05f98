"""Whether an in-place build has anything to do, decided before anything is imported.

``python -m aotc build`` with nothing changed should answer at once, not after tracing
every kernel and asking setuptools. The stamp is a hash of everything a build reads: the
config, pyproject.toml, every ``.py`` of the packages holding the kernel modules (kernels
import helpers from their package), and aotc itself. When it matches the stamp of the
last successful build and every module's extension is still in place, the build is
skipped.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from pathlib import Path

from .. import config

_AOTC = Path(__file__).resolve().parents[1]


def _files(root: Path, cfg: config.Config) -> Iterable[Path]:
    yield root / "pyproject.toml"
    packages = {m.split(".")[0] for m in cfg.modules}
    for base in (root, root / "src"):
        for package in sorted(packages):
            yield from sorted((base / package).rglob("*.py"))
            single = base / f"{package}.py"
            if single.is_file():
                yield single
    yield from sorted(_AOTC.rglob("*.py"))  # (with an installed aotc's templates/*.py)
    checkout = _AOTC.parent / "templates"  # a source checkout's templates
    yield from sorted([*checkout.glob("*.in"), *checkout.glob("*.pxd"), *checkout.glob("*.py")])
    yield from sorted([*(_AOTC / "templates").glob("*.in"), *(_AOTC / "templates").glob("*.pxd")])


def stamp(root: Path, cfg: config.Config) -> str:
    digest = hashlib.sha256(repr(cfg).encode())
    for path in _files(root, cfg):
        if path.is_file():
            digest.update(str(path).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def _stamp_file(root: Path, cfg: config.Config) -> Path:
    build_dir = Path(cfg.build_dir)
    return (build_dir if build_dir.is_absolute() else root / build_dir) / "inplace.stamp"


def up_to_date(root: Path, cfg: config.Config, extensions: dict[str, list[Path]]) -> bool:
    """Nothing changed since the last successful in-place build, whose extensions (per
    module, as :func:`aotc.packaging.layout.inplace_artifacts` finds them) are all still there."""
    path = _stamp_file(root, cfg)
    if not path.is_file() or not all(extensions.get(m) for m in cfg.modules):
        return False
    return path.read_text() == stamp(root, cfg)


def record(root: Path, cfg: config.Config) -> None:
    path = _stamp_file(root, cfg)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(stamp(root, cfg))
