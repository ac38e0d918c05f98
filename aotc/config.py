"""The ``[tool.aotc]`` table: one typed, validated :class:`Config`.

Each key can be set in three places; the first that sets it wins::

    -C key=value / --config-settings   (PEP 517 config settings, see build_backend)
    AOTC_<KEY> environment variables   (AOTC_OPT_LEVEL=0, AOTC_TARGET=native, ...)
    [tool.aotc] in pyproject.toml

Unknown keys are errors with a did-you-mean, so a typo never silently builds with the
defaults. Config settings reach this module through :func:`config_settings_scope`, the
one place the build backend hands them over.
"""

from __future__ import annotations

import contextlib
import dataclasses
import difflib
import os
import platform
import re
import sys
from collections.abc import Callable, Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from .errors import ConfigError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

#: The default wheel: the portable baseline plus the AVX2 and AVX-512 levels, the best one
#: the running CPU has chosen at import.
DEFAULT_TARGETS = ("x86-64-v2", "x86-64-v3", "x86-64-v4")
#: The default targets of each architecture (AArch64: NEON, and SVE where the CPU has it;
#: the instruction sets' ``default_levels``, named here so reading a config needs no LLVM).
DEFAULT_TARGETS_BY_ARCH = {"x86_64": DEFAULT_TARGETS, "aarch64": ("aarch64", "aarch64-sve")}
#: The platforms a wheel can be built for besides the build machine's own (``platform``).
#: (musllinux is not one yet: zig links musl's C library by the name ``libc.so``, which
#: Alpine has only with its development files.)
PLATFORMS = ("linux-x86_64", "linux-aarch64")


@dataclass(frozen=True)
class Config:
    """Build options of one project, after precedence and validation."""

    modules: tuple[str, ...]
    """Dotted names of the kernel modules to compile (``["mypkg.kernels"]``); required.
    Each becomes one extension module holding that module's exported functions."""

    targets: tuple[str, ...] = DEFAULT_TARGETS
    """CPUs to compile for (``targets = [...]``, or one ``target = "..."``): LLVM CPU names
    (``"x86-64-v3"``, ``"skylake"``) or ``"native"`` for the build machine. Each module
    carries code for every target and runs the best one the CPU has, chosen at import
    (``AOTC_CPU=<target>`` forces one). The first is the baseline: its entry points keep
    the plain names in the C header. The default runs on any x86-64 machine from the last
    decade at full speed on AVX2 and AVX-512 machines."""

    opt_level: int = 3
    """LLVM optimization level, 0 to 3. 0 compiles fastest and is easiest to read in
    ``python -m aotc inspect --asm``."""

    fast_math: bool = False
    """Let LLVM reassociate floating-point math (vectorized reductions, FMA contraction).
    Results may differ from NumPy in the last bits, and NaN/inf handling is not kept."""

    parallel: bool = False
    """Split large loop nests, matrix products and reductions over the process's thread
    pool (``@aotc.export(parallel=...)`` overrides it per kernel)."""

    build_dir: str = ".aotc-build"
    """Where rendered ``.pyx``, headers, objects and logs are kept, relative to the
    project root. Kept between builds so intermediates can be inspected."""

    verbose: bool = False
    """Print each step of the build (tracing, passes, codegen, Cython) to stderr."""

    glibc: str = ""
    """The oldest glibc the extensions must load on, such as ``"2.17"`` (manylinux2014:
    RHEL 7 and later). Set, they are compiled and linked by ``zig cc`` for that glibc
    (the ``ziglang`` package) and the wheel is tagged ``manylinux_2_17_<arch>``; empty,
    the host's compiler and glibc are used (see :mod:`aotc.packaging.toolchain`)."""

    platform: str = ""
    """The platform the extensions are for, when it is not the build machine's:
    ``"linux-aarch64"`` or ``"linux-x86_64"``. Another platform's extensions are compiled
    by LLVM for its CPU levels (AArch64: ``aarch64`` with NEON and ``aarch64-sve``) and
    linked by ``zig cc`` (the ``ziglang`` package) for glibc 2.17 (or ``glibc``), and the
    wheel is tagged ``manylinux_2_17_<arch>`` for the Python that runs the build (see
    :mod:`aotc.packaging.toolchain`)."""

    fusion: bool = True
    """Fuse elementwise operations, views and the reductions consuming them into one loop
    nest each. ``false`` compiles every operation as its own loop: the unfused baseline,
    for comparison and for bisecting a suspected fusion bug."""


#: TOML spelling of each field (``opt-level``) -> field name (``opt_level``).
KEYS: dict[str, str] = {f.name.replace("_", "-"): f.name for f in fields(Config)}
KEYS["target"] = "targets"  # one target, as most projects write it


def _fail(key: str, expected: str, value: Any) -> ConfigError:
    """``key`` names the setting where the user wrote it: ``[tool.aotc] opt-level``."""
    return ConfigError(f"{key} must be {expected}, got {value!r}")


def _parse_bool(key: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in _BOOL_WORDS:
        return _BOOL_WORDS[value.strip().lower()]
    raise _fail(key, "true or false", value)


_BOOL_WORDS = {"1": True, "true": True, "yes": True, "on": True,
               "0": False, "false": False, "no": False, "off": False}


def _parse_opt_level(key: str, value: Any) -> int:
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 3:
        raise _fail(key, "an integer from 0 to 3", value)
    return value


def _parse_str(key: str, value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise _fail(key, "a non-empty string", value)
    return value.strip()


def _parse_modules(key: str, value: Any) -> tuple[str, ...]:
    if isinstance(value, str):  # from -C or the environment: comma-separated
        value = [v for v in value.split(",") if v.strip()]
    if not isinstance(value, list | tuple) or not value:
        raise _fail(key, "a non-empty list of module names", value)
    names = []
    for name in value:
        if not isinstance(name, str) or not all(p.isidentifier() for p in name.strip().split(".")):
            raise _fail(key, "a list of dotted module names such as 'mypkg.kernels'", name)
        names.append(name.strip())
    if len(set(names)) != len(names):
        raise _fail(key, "a list without duplicates", value)
    return tuple(names)


def _parse_glibc(key: str, value: Any) -> str:
    text = value.strip() if isinstance(value, str) else value
    if text != "" and not (isinstance(text, str) and re.fullmatch(r"2\.\d{1,2}", text)):
        raise _fail(key, 'a glibc version such as "2.17" (or "" for the host\'s)', value)
    return str(text)


def _parse_platform(key: str, value: Any) -> str:
    text = value.strip() if isinstance(value, str) else value
    if text != "" and text not in PLATFORMS:
        close = difflib.get_close_matches(str(text), PLATFORMS, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise _fail(key, "one of " + ", ".join(map(repr, PLATFORMS)) + hint, value)
    return str(text)


def _parse_targets(key: str, value: Any) -> tuple[str, ...]:
    """One target name, a list of them, or (from -C or the environment) a comma list."""
    if isinstance(value, str):
        value = [v for v in value.split(",") if v.strip()]
    if not isinstance(value, list | tuple) or not value:
        raise _fail(key, "a target name or a non-empty list of them", value)
    names = tuple(_parse_str(key, v) for v in value)
    if len(set(names)) != len(names):
        raise _fail(key, "a list without duplicates", value)
    return names


#: The TOML types a field takes in ``[tool.aotc]``: there a string is not a bool or a
#: number (``fusion = "yes"``), and ``modules`` is a list. (``-C`` and the environment
#: give strings, which the parsers read.)
TOML_TYPES: dict[str, tuple[tuple[type, ...], str]] = {
    "modules": ((list,), "a non-empty list of module names"),
    "targets": ((str, list), "a target name or a non-empty list of them"),
    "opt_level": ((int,), "an integer from 0 to 3"),
    "build_dir": ((str,), "a non-empty string"),
    "glibc": ((str,), 'a glibc version such as "2.17"'),
    "platform": ((str,), "a platform name such as 'linux-aarch64'"),
    **dict.fromkeys(("fast_math", "parallel", "verbose", "fusion"), ((bool,), "true or false")),
}


def _check_toml_type(key: str, name: str, value: Any) -> None:
    types, expected = TOML_TYPES[name]
    if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
        raise _fail(key, expected, value)


#: How to read and validate each field, whatever the source of the value.
PARSERS: dict[str, Callable[[str, Any], Any]] = {
    "modules": _parse_modules,
    "targets": _parse_targets,
    "opt_level": _parse_opt_level,
    "fast_math": _parse_bool,
    "parallel": _parse_bool,
    "build_dir": _parse_str,
    "glibc": _parse_glibc,
    "platform": _parse_platform,
    "verbose": _parse_bool,
    "fusion": _parse_bool,
}


def _field_name(key: str, source: str) -> str:
    name = KEYS.get(key) or KEYS.get(key.replace("_", "-"))
    if name is None:
        close = difflib.get_close_matches(key.replace("_", "-"), KEYS, n=1)
        hint = f"did you mean '{close[0]}'?" if close else f"known keys: {', '.join(KEYS)}"
        raise ConfigError(f"unknown {source} key '{key}'", hint=hint)
    return name


# -- the three layers -------------------------------------------------------------------

def read_pyproject(project_root: str | os.PathLike[str]) -> dict[str, Any] | None:
    """The raw ``[tool.aotc]`` table, or None when the project does not use aotc."""
    path = Path(project_root) / "pyproject.toml"
    if not path.is_file():
        return None
    try:
        with path.open("rb") as f:
            data = tomllib.load(f)
    except tomllib.TOMLDecodeError as err:
        raise ConfigError(f"{path}: {err}") from None
    table = data.get("tool", {}).get("aotc")
    if table is not None and not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.aotc] must be a table")
    return table


#: The environment variables aotc reads besides the settings' ``AOTC_<KEY>``, with what
#: each does (the API reference lists them from here).
RUNTIME_VARIABLES = {
    "AOTC_CPU": "At import of a built module (or in aotc.jit): run the code compiled for "
                "this target (one of the module's targets) instead of the best this CPU "
                "has; an ImportError names the targets when it has no such code.",
    "AOTC_NUM_THREADS": "The size of the thread pool of parallel kernels, 1 to 256 "
                        "(default: the CPUs of the affinity mask, capped by a cgroup "
                        "quota); threadpoolctl's limits apply on top.",
    "AOTC_CACHE_DIR": "The object cache shared by builds and aotc.jit (default: "
                      "$XDG_CACHE_HOME/aotc or ~/.cache/aotc).",
    "AOTC_CACHE_MAX_MB": "The cache's bound in megabytes (default 1024); the least "
                         "recently used objects go first.",
    "AOTC_VENV": "scripts/test.sh only: the virtual environment to test in (default "
                 ".venv).",
    "AOTC_QEMU_SYSROOT": "scripts/test.sh and tests/test_cross.py only: the arm64 sysroot "
                         "cross-built wheels are run in under qemu-user (default "
                         "~/.cache/aotc-qemu/aarch64).",
}


def _variable(key: str) -> str:
    return "AOTC_" + key.upper().replace("-", "_")


def env_settings(environ: Mapping[str, str]) -> dict[str, str]:
    """``AOTC_<KEY>`` variables as settings (``AOTC_OPT_LEVEL`` -> ``opt-level``). An
    ``AOTC_`` variable aotc does not read but one it does is close to (``AOTC_FUSOIN``)
    is an error with a did-you-mean: a typo must not build with the defaults."""
    known = {_variable(key) for key in KEYS} | set(RUNTIME_VARIABLES)
    for var in environ:
        if var.startswith("AOTC_") and var not in known:
            close = difflib.get_close_matches(var, known, n=1, cutoff=0.8)
            if close:
                raise ConfigError(f"unknown environment variable {var}",
                                  hint=f"did you mean {close[0]}?")
    return {key: environ[var] for key in KEYS if (var := _variable(key)) in environ}


#: PEP 517 config settings of the running build hook; set only by config_settings_scope.
_CONFIG_SETTINGS: ContextVar[Mapping[str, Any] | None] = ContextVar(
    "aotc_config_settings", default=None)


@contextlib.contextmanager
def config_settings_scope(settings: Mapping[str, Any] | None) -> Iterator[None]:
    """Make ``-C`` settings visible to :func:`load` while a build hook runs."""
    token = _CONFIG_SETTINGS.set(dict(settings or {}))
    try:
        yield
    finally:
        _CONFIG_SETTINGS.reset(token)


def split_config_settings(
    settings: Mapping[str, Any] | None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Split ``-C`` settings into aotc's keys and the rest (setuptools reads those).

    A key spelled ``aotc.<key>`` is always aotc's. A key that is neither aotc's nor one
    setuptools knows (``-C arch=native``, ``opt_levle``) is an error, with a did-you-mean,
    rather than a silently ignored setting; options (``--build-option``) pass through.
    """
    ours: dict[str, Any] = {}
    rest: dict[str, Any] = {}
    for key, value in (settings or {}).items():
        bare = key.removeprefix("aotc.")
        if bare.replace("_", "-") in KEYS:
            ours[bare] = value
        elif key.startswith("aotc.") or (key not in SETUPTOOLS_SETTINGS
                                         and not key.startswith("-")):
            _field_name(bare, "config setting")  # raises, with a did-you-mean
        else:
            rest[key] = value
    return ours, rest


#: Config settings setuptools.build_meta reads itself; passed through untouched.
SETUPTOOLS_SETTINGS = frozenset({"verbose", "quiet", "editable-mode", "editable_mode",
                                 "tag-date", "tag-build"})


def parse(
    table: Mapping[str, Any],
    *,
    environ: Mapping[str, str] | None = None,
    settings: Mapping[str, Any] | None = None,
) -> Config:
    """Validate ``[tool.aotc]`` and apply the environment and ``-C`` layers on top."""
    values: dict[str, Any] = {}
    if environ is None:
        environ = os.environ
    if settings is None:
        settings = _CONFIG_SETTINGS.get() or {}
    layers = (
        ("[tool.aotc]", "[tool.aotc] {}", table),
        ("AOTC_* environment", "AOTC_{}", env_settings(environ)),
        ("config setting", "-C {}", settings),
    )
    for source, label, layer in layers:
        for key, value in layer.items():
            name = _field_name(key, source)
            if source == "[tool.aotc]":
                _check_toml_type(label.format(key), name, value)
            spelled = key.replace("_", "-")
            shown = spelled.upper().replace("-", "_") if label.startswith("AOTC_") else spelled
            values[name] = PARSERS[name](label.format(shown), value)
    if "modules" not in values:
        raise ConfigError("[tool.aotc] needs 'modules', for example modules = ['mypkg.kernels']")
    arch = platform_arch(values.get("platform", ""))
    values.setdefault("targets", DEFAULT_TARGETS_BY_ARCH.get(arch, DEFAULT_TARGETS))
    return Config(**values)


def platform_arch(name: str) -> str:
    """The architecture of platform ``name`` (``linux-aarch64`` -> ``aarch64``); for the
    build machine's own (``""``), the machine's, as Python names it."""
    if name:
        return name.rpartition("-")[2]
    machine = platform.machine().lower()
    return {"amd64": "x86_64", "arm64": "aarch64"}.get(machine, machine)


def load(project_root: str | os.PathLike[str]) -> Config | None:
    """The project's config, or None when its pyproject.toml has no ``[tool.aotc]``."""
    table = read_pyproject(project_root)
    if table is None:
        return None
    return parse(table)


def replace(config: Config, **changes: Any) -> Config:
    """A copy of ``config`` with fields changed (validated like any other source)."""
    checked = {k: PARSERS[k](k.replace("_", "-"), v) for k, v in changes.items()}
    return dataclasses.replace(config, **checked)
