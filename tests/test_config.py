"""``[tool.aotc]``: schema, validation, did-you-mean, and -C > environment > pyproject."""

from __future__ import annotations

import dataclasses
import sys
import textwrap

import pytest

from aotc import config
from aotc.config import Config, parse
from aotc.errors import ConfigError


def _parse(table, environ=None, settings=None):
    return parse(table, environ=environ or {}, settings=settings or {})


def test_defaults():
    cfg = _parse({"modules": ["pkg.kernels"]})
    assert cfg == Config(modules=("pkg.kernels",))
    assert (cfg.targets, cfg.opt_level, cfg.fast_math, cfg.parallel, cfg.build_dir,
            cfg.verbose) == (("x86-64-v2", "x86-64-v3", "x86-64-v4"), 3, False, False,
                             ".aotc-build", False)


def test_fusion_is_on_by_default_and_can_be_switched_off():
    assert _parse({"modules": ["m"]}).fusion is True
    assert _parse({"modules": ["m"], "fusion": False}).fusion is False
    assert _parse({"modules": ["m"]}, environ={"AOTC_FUSION": "0"}).fusion is False
    assert _parse({"modules": ["m"]}, settings={"fusion": "false"}).fusion is False


def test_every_field_has_a_docstring_and_a_parser():
    source = config.__loader__.get_source(config.__name__)
    for field in dataclasses.fields(Config):
        assert field.name in config.PARSERS
        declaration = source.index(f"    {field.name}: ")
        assert source[declaration:].split("\n", 2)[1].strip().startswith('"""'), field.name


def test_all_keys():
    cfg = _parse({"modules": ["a.b", "c"], "target": "native", "opt-level": 1,
                  "fast-math": True, "parallel": True, "build-dir": "out", "verbose": True})
    assert cfg == Config(("a.b", "c"), ("native",), 1, True, True, "out", True)


@pytest.mark.parametrize("table, message", [
    ({}, "needs 'modules'"),
    ({"modules": []}, "non-empty list"),
    ({"modules": "pkg.kernels"}, r"\[tool.aotc\] modules must be a non-empty list of module "
                                 "names, got 'pkg.kernels'"),
    ({"modules": ["m"], "fusion": "yes"}, "fusion must be true or false, got 'yes'"),
    ({"modules": ["m"], "fast-math": "yes"}, "fast-math must be true or false"),
    ({"modules": ["m"], "opt-level": "2"}, "opt-level must be an integer from 0 to 3, got '2'"),
    ({"modules": ["pkg.kernels", "pkg.kernels"]}, "without duplicates"),
    ({"modules": ["pkg/kernels.py"]}, "dotted module names"),
    ({"modules": [3]}, "dotted module names"),
    ({"modules": ["m"], "opt-level": 4}, "0 to 3"),
    ({"modules": ["m"], "opt-level": True}, "0 to 3"),
    ({"modules": ["m"], "opt-level": "fast"}, "0 to 3"),
    ({"modules": ["m"], "fast-math": "maybe"}, "true or false"),
    ({"modules": ["m"], "parallel": 1}, "true or false"),
    ({"modules": ["m"], "target": ""}, "a target name or a non-empty list"),
    ({"modules": ["m"], "target": 3}, "a target name or a non-empty list"),
    ({"modules": ["m"], "targets": []}, "a target name or a non-empty list"),
    ({"modules": ["m"], "targets": ["native", "native"]}, "without duplicates"),
    ({"modules": ["m"], "build-dir": None}, "non-empty string"),
    ({"modules": ["m"], "glibc": "2.x"}, 'glibc must be a glibc version such as "2.17"'),
    ({"modules": ["m"], "glibc": 2.17}, "glibc must be a glibc version"),
])
def test_validation(table, message):
    if message is None:
        assert _parse(table).modules == ("pkg.kernels",)
        return
    with pytest.raises(ConfigError, match=message):
        _parse(table)


def test_target_lists():
    assert _parse({"modules": ["m"], "target": ["x86-64-v3"]}).targets == ("x86-64-v3",)
    assert _parse({"modules": ["m"], "target": "native"}).targets == ("native",)
    both = _parse({"modules": ["m"], "targets": ["x86-64-v2", "x86-64-v3"]})
    assert both.targets == ("x86-64-v2", "x86-64-v3")
    assert _parse({"modules": ["m"]}, settings={"targets": "x86-64-v2, native"}).targets \
        == ("x86-64-v2", "native")


@pytest.mark.parametrize("key, suggestion", [
    ("opt_level", None),  # underscores are accepted as dashes
    ("opt-levle", "opt-level"),
    ("fastmath", "fast-math"),
    ("module", "modules"),
    ("tagret", "target"),
    ("zzz", None),
])
def test_unknown_keys_suggest(key, suggestion):
    table = {"modules": ["m"], key: 1 if "opt" in key else True}
    if key == "opt_level":
        assert _parse(table).opt_level == 1
        return
    with pytest.raises(ConfigError, match=f"unknown \\[tool.aotc\\] key '{key}'") as err:
        _parse(table)
    if suggestion:
        assert f"did you mean '{suggestion}'?" in str(err.value)
    else:
        assert "known keys: modules, target" in str(err.value)


def test_precedence_settings_over_environment_over_pyproject():
    table = {"modules": ["m"], "opt-level": 1, "target": "x86-64", "fast-math": False}
    environ = {"AOTC_OPT_LEVEL": "2", "AOTC_TARGET": "skylake", "AOTC_FAST_MATH": "yes",
               "AOTC_UNRELATED": "x", "OTHER": "y"}
    cfg = _parse(table, environ, {"opt-level": "0"})
    assert (cfg.opt_level, cfg.targets, cfg.fast_math) == (0, ("skylake",), True)
    assert _parse(table, environ).opt_level == 2
    assert _parse(table).opt_level == 1


def test_environment_values_are_validated():
    with pytest.raises(ConfigError, match="AOTC_OPT_LEVEL must be an integer from 0 to 3"):
        _parse({"modules": ["m"]}, {"AOTC_OPT_LEVEL": "9"})
    with pytest.raises(ConfigError, match="-C fast-math must be true or false"):
        _parse({"modules": ["m"]}, settings={"fast_math": "perhaps"})
    cfg = _parse({"modules": ["m"]}, {"AOTC_MODULES": "a.b, c", "AOTC_VERBOSE": "off"})
    assert cfg.modules == ("a.b", "c") and cfg.verbose is False


def test_config_settings_scope_is_the_default_settings_layer():
    with config.config_settings_scope({"target": "native"}):
        assert parse({"modules": ["m"]}, environ={}).targets == ("native",)
    assert parse({"modules": ["m"]}, environ={}).targets == config.DEFAULT_TARGETS


def test_split_config_settings():
    ours, rest = config.split_config_settings({
        "opt-level": "0", "aotc.target": "native", "verbose": "1",
        "--build-option": "--foo", "editable-mode": "strict",
    })
    assert ours == {"opt-level": "0", "target": "native", "verbose": "1"}
    assert rest == {"--build-option": "--foo", "editable-mode": "strict"}
    with pytest.raises(ConfigError, match="did you mean 'opt-level'"):
        config.split_config_settings({"opt-levl": "0"})
    with pytest.raises(ConfigError, match="unknown config setting key 'nonsense'"):
        config.split_config_settings({"aotc.nonsense": "0"})
    with pytest.raises(ConfigError, match="unknown config setting key 'arch'"):
        config.split_config_settings({"arch": "native"})  # no silent setuptools pass-through


def test_misspelled_environment_variables_are_errors():
    with pytest.raises(ConfigError, match="unknown environment variable AOTC_FUSOIN") as err:
        _parse({"modules": ["m"]}, {"AOTC_FUSOIN": "0"})
    assert "did you mean AOTC_FUSION?" in str(err.value)
    with pytest.raises(ConfigError, match="did you mean AOTC_CPU?"):
        _parse({"modules": ["m"]}, {"AOTC_CPUS": "x86-64-v3"})
    # variables that are no near miss are someone else's
    assert _parse({"modules": ["m"]}, {"AOTC_UNRELATED": "x", "AOTC_CPU": "v3"}).fusion


def test_load_reads_pyproject(tmp_path):
    assert config.load(tmp_path) is None  # no pyproject.toml
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    assert config.load(tmp_path) is None  # no [tool.aotc]
    (tmp_path / "pyproject.toml").write_text(textwrap.dedent("""
        [tool.aotc]
        modules = ["pkg.kernels"]
        opt-level = 2
    """))
    with config.config_settings_scope({}):
        cfg = config.load(tmp_path)
    assert cfg is not None and cfg.modules == ("pkg.kernels",)
    (tmp_path / "pyproject.toml").write_text("[tool.aotc\n")
    with pytest.raises(ConfigError, match="pyproject.toml"):
        config.load(tmp_path)
    (tmp_path / "pyproject.toml").write_text("[tool]\naotc = 3\n")
    with pytest.raises(ConfigError, match="must be a table"):
        config.load(tmp_path)


def test_replace_validates():
    cfg = _parse({"modules": ["m"]})
    assert config.replace(cfg, opt_level="1").opt_level == 1
    with pytest.raises(ConfigError):
        config.replace(cfg, opt_level=7)


def test_glibc_selects_zig_and_the_manylinux_tag(monkeypatch):
    from aotc.errors import BuildError
    from aotc.packaging import toolchain

    assert _parse({"modules": ["m"]}).glibc == ""
    assert _parse({"modules": ["m"], "glibc": "2.17"}).glibc == "2.17"
    assert _parse({"modules": ["m"]}, settings={"glibc": "2.28"}).glibc == "2.28"
    arch = toolchain.host_arch()
    pinned = _parse({"modules": ["m"], "glibc": "2.17"})
    assert toolchain.wheel_platform(pinned) == f"manylinux_2_17_{arch}"
    assert toolchain.wheel_platform(_parse({"modules": ["m"]})) is None
    assert toolchain.c_compiler(pinned)[-2:] == ["-target", f"{arch}-linux-gnu.2.17"]
    monkeypatch.setattr(toolchain.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(BuildError, match="ziglang package is not installed") as err:
        toolchain.c_compiler(pinned)
    assert "build-system" in str(err.value.hint)


def test_platform_picks_the_architecture_its_levels_and_the_wheel():
    """platform = "linux-aarch64": AArch64's default levels, zig for glibc 2.17 and the
    manylinux2014 aarch64 tag, the extension named for that CPython; a misspelled
    platform, the build machine's 'native' CPU or another architecture's level is a
    ConfigError saying what to write instead."""
    from aotc.errors import ConfigError
    from aotc.packaging import build, toolchain

    cfg = _parse({"modules": ["m"], "platform": "linux-aarch64"})
    assert cfg.targets == ("aarch64", "aarch64-sve")
    assert [build.target_spec(cfg, t).isa.arch for t in cfg.targets] == ["aarch64"] * 2
    assert toolchain.wheel_platform(cfg) == "manylinux_2_17_aarch64"
    assert toolchain.c_compiler(cfg)[-2:] == ["-target", "aarch64-linux-gnu.2.17"]
    assert toolchain.extension_suffix(cfg) == (
        f".cpython-{sys.version_info[0]}{sys.version_info[1]}-aarch64-linux-gnu.so")
    assert _parse({"modules": ["m"]}, settings={"platform": "linux-aarch64"}).platform \
        == "linux-aarch64"
    with pytest.raises(ConfigError, match="did you mean 'linux-aarch64'"):
        _parse({"modules": ["m"], "platform": "linux-arm64"})
    with pytest.raises(ConfigError, match="'native' names this build machine's CPU"):
        build.target_spec(_parse({"modules": ["m"], "platform": "linux-aarch64",
                                  "target": "native"}))
    with pytest.raises(ConfigError, match="is an x86_64 CPU") as err:
        build.target_spec(_parse({"modules": ["m"], "platform": "linux-aarch64",
                                  "target": "x86-64-v3"}))
    assert "aarch64-sve2" in str(err.value.hint)
