"""aotc's PEP 517/660 build backend: ``build-backend = "build_backend"``.

Every hook is a one-line delegation to ``setuptools.build_meta``; aotc joins the build
through setuptools' ``finalize_distribution_options`` entry point (``entry``, which
loads ``aotc.packaging.build`` only for projects with ``[tool.aotc]``), which
adds one extension per ``[tool.aotc]`` module and compiles the kernels in ``build_ext``.

What this module adds is the hand-over of ``-C key=value`` config settings: each hook
runs inside :func:`_settings`, the one place that makes them visible to
``aotc.config`` (they take precedence over ``AOTC_*`` variables and pyproject.toml).

``build_editable`` gives setuptools' editable wheel; its extension modules are compiled
like a regular wheel's. For an edit-compile loop, ``python -m aotc build`` rebuilds the
extensions in place.

Wheels and sdists are reproducible: their time stamps are ``SOURCE_DATE_EPOCH``, else a
fixed date (:data:`DEFAULT_EPOCH`), and the sdist is rewritten without the checkout's
owners, modes and file order, so the same source gives the same bytes in any clone.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import os
import tarfile
from collections.abc import Iterator
from typing import Any, Protocol

ConfigSettings = dict[str, Any] | None
#: The time stamp of every file in a wheel and an sdist when ``SOURCE_DATE_EPOCH`` is
#: unset: 1980-01-01, the earliest a zip archive holds (hatchling's choice too).
DEFAULT_EPOCH = 315532800


@contextlib.contextmanager
def _settings(config_settings: ConfigSettings, *, wheel: bool = False) -> Iterator[None]:
    from aotc import config
    from aotc.errors import AotcError
    from aotc.packaging.build import report

    try:
        ours, _ = config.split_config_settings(config_settings)
    except AotcError as err:
        report(err)
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if wheel and epoch is None:
        os.environ["SOURCE_DATE_EPOCH"] = str(DEFAULT_EPOCH)
    try:
        with config.config_settings_scope(ours):
            yield
    finally:
        if wheel and epoch is None:
            os.environ.pop("SOURCE_DATE_EPOCH", None)


class _BuildMeta(Protocol):
    """The hooks of ``setuptools.build_meta`` used here (setuptools ships no types)."""

    def get_requires_for_build_wheel(self, config_settings: ConfigSettings) -> list[str]: ...
    def get_requires_for_build_sdist(self, config_settings: ConfigSettings) -> list[str]: ...
    def get_requires_for_build_editable(self, config_settings: ConfigSettings) -> list[str]: ...
    def prepare_metadata_for_build_wheel(self, metadata_directory: str,
                                         config_settings: ConfigSettings) -> str: ...
    def prepare_metadata_for_build_editable(self, metadata_directory: str,
                                            config_settings: ConfigSettings) -> str: ...
    def build_wheel(self, wheel_directory: str, config_settings: ConfigSettings,
                    metadata_directory: str | None) -> str: ...
    def build_sdist(self, sdist_directory: str, config_settings: ConfigSettings) -> str: ...
    def build_editable(self, wheel_directory: str, config_settings: ConfigSettings,
                       metadata_directory: str | None) -> str: ...


def _backend() -> _BuildMeta:
    from setuptools import build_meta

    backend: _BuildMeta = build_meta
    return backend


def get_requires_for_build_wheel(config_settings: ConfigSettings = None) -> list[str]:
    with _settings(config_settings):
        return _backend().get_requires_for_build_wheel(config_settings)


def get_requires_for_build_sdist(config_settings: ConfigSettings = None) -> list[str]:
    with _settings(config_settings):
        return _backend().get_requires_for_build_sdist(config_settings)


def get_requires_for_build_editable(config_settings: ConfigSettings = None) -> list[str]:
    with _settings(config_settings):
        return _backend().get_requires_for_build_editable(config_settings)


def prepare_metadata_for_build_wheel(metadata_directory: str,
                                     config_settings: ConfigSettings = None) -> str:
    with _settings(config_settings):
        return _backend().prepare_metadata_for_build_wheel(metadata_directory, config_settings)


def prepare_metadata_for_build_editable(metadata_directory: str,
                                        config_settings: ConfigSettings = None) -> str:
    with _settings(config_settings):
        return _backend().prepare_metadata_for_build_editable(metadata_directory,
                                                              config_settings)


def build_wheel(wheel_directory: str, config_settings: ConfigSettings = None,
                metadata_directory: str | None = None) -> str:
    with _settings(config_settings, wheel=True):
        return _backend().build_wheel(wheel_directory, config_settings, metadata_directory)


def build_sdist(sdist_directory: str, config_settings: ConfigSettings = None) -> str:
    with _settings(config_settings):
        name = _backend().build_sdist(sdist_directory, config_settings)
    epoch = int(os.environ.get("SOURCE_DATE_EPOCH", DEFAULT_EPOCH))
    _normalize_sdist(os.path.join(sdist_directory, name), epoch)
    return str(name)


def _normalize_sdist(path: str, epoch: int) -> None:
    """Rewrite the sdist so that its bytes depend on the files' contents alone: members
    in name order, every time stamp ``epoch`` (the gzip header's too), no owners, and
    modes 644 or 755. setuptools takes each file's time and owner from the checkout."""
    members: list[tuple[tarfile.TarInfo, bytes | None]] = []
    with tarfile.open(path) as src:
        for info in src.getmembers():
            stream = src.extractfile(info) if info.isfile() else None
            members.append((info, stream.read() if stream is not None else None))
    with open(path, "wb") as raw, \
            gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=epoch) as zipped, \
            tarfile.open(fileobj=zipped, mode="w", format=tarfile.PAX_FORMAT) as out:
        for info, data in sorted(members, key=lambda m: m[0].name):
            info.mtime, info.uid, info.gid, info.uname, info.gname = epoch, 0, 0, "", ""
            info.mode = 0o755 if info.isdir() or info.mode & 0o111 else 0o644
            info.pax_headers = {}
            out.addfile(info, io.BytesIO(data) if data is not None else None)


def build_editable(wheel_directory: str, config_settings: ConfigSettings = None,
                   metadata_directory: str | None = None) -> str:
    with _settings(config_settings, wheel=True):
        return _backend().build_editable(wheel_directory, config_settings, metadata_directory)
