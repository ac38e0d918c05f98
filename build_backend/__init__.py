"""aotc's PEP 517/660 build backend: ``build-backend = "build_backend"``.

Every hook is a one-line delegation to ``setuptools.build_meta``; aotc joins the build
through setuptools' ``finalize_distribution_options`` entry point (``entry``, which
loads ``aotc.build`` only for projects with ``[tool.aotc]``), which
adds one extension per ``[tool.aotc]`` module and compiles the kernels in ``build_ext``.

What this module adds is the hand-over of ``-C key=value`` config settings: each hook
runs inside :func:`_settings`, the one place that makes them visible to
``aotc.config`` (they take precedence over ``AOTC_*`` variables and pyproject.toml).

``build_editable`` gives setuptools' editable wheel; its extension modules are compiled
like a regular wheel's. For an edit-compile loop, ``python -m aotc build`` rebuilds the
extensions in place.

Wheels are reproducible: when ``SOURCE_DATE_EPOCH`` is unset, ``build_wheel`` sets it to
the modification time of pyproject.toml (preserved by the sdist), so the same source gives
the same bytes.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import Any

ConfigSettings = dict[str, Any] | None


@contextlib.contextmanager
def _settings(config_settings: ConfigSettings, *, wheel: bool = False) -> Iterator[None]:
    from aotc import config
    from aotc.build import report
    from aotc.errors import AotcError

    try:
        ours, _ = config.split_config_settings(config_settings)
    except AotcError as err:
        report(err)
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if wheel and epoch is None and os.path.isfile("pyproject.toml"):
        os.environ["SOURCE_DATE_EPOCH"] = str(int(os.path.getmtime("pyproject.toml")))
    try:
        with config.config_settings_scope(ours):
            yield
    finally:
        if wheel and epoch is None:
            os.environ.pop("SOURCE_DATE_EPOCH", None)


def _backend() -> Any:
    from setuptools import build_meta

    return build_meta


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
        return _backend().build_sdist(sdist_directory, config_settings)


def build_editable(wheel_directory: str, config_settings: ConfigSettings = None,
                   metadata_directory: str | None = None) -> str:
    with _settings(config_settings, wheel=True):
        return _backend().build_editable(wheel_directory, config_settings, metadata_directory)
