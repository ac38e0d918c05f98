"""Sphinx configuration of aotc's API reference (``docs/api``).

Built by ``scripts/test.sh`` (so by CI) with warnings as errors::

    python -m sphinx -W --keep-going -b html docs/api build/api-docs

Everything on the pages comes from the code: the public functions' docstrings
(autodoc), the ``[tool.aotc]`` keys from :class:`aotc.config.Config`'s attribute
docstrings, the environment variables from :data:`aotc.config.RUNTIME_VARIABLES` and the
keys, and the command line from ``python -m aotc``'s own argparse help.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import Any

from docutils import nodes
from docutils.parsers.rst import Directive
from docutils.statemachine import StringList

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

project = "aotc"
author = "the aotc developers"
extensions = ["sphinx.ext.autodoc"]
autodoc_typehints = "none"  # the signatures read better than the annotations' types
html_theme = "alabaster"
exclude_patterns: list[str] = []


def _rst(directive: Directive, lines: list[str]) -> list[nodes.Node]:
    """Parse generated reST in the directive's place."""
    node = nodes.section()
    node.document = directive.state.document
    directive.state.nested_parse(StringList(lines, "<aotc generated>"), 0, node)
    return list(node.children)


def _doc(cls: type, name: str) -> str:
    from sphinx.pycode import ModuleAnalyzer

    docs = ModuleAnalyzer.for_module(cls.__module__).find_attr_docs()
    return " ".join(docs.get((cls.__name__, name), [""])).strip()


def _toml(value: Any) -> str:
    """A default as pyproject.toml writes it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, tuple):
        return "[" + ", ".join(map(_toml, value)) + "]"
    return f'"{value}"' if isinstance(value, str) else str(value)


class ConfigKeys(Directive):
    """The ``[tool.aotc]`` keys: name, default, meaning."""

    def run(self) -> list[nodes.Node]:
        from aotc import config

        lines: list[str] = []
        for field in dataclasses.fields(config.Config):
            key = field.name.replace("_", "-")
            default = "(required)" if field.default is dataclasses.MISSING else \
                f"``{_toml(field.default)}``"
            lines += [f"``{key}``", f"    default {default}; ``-C {key}=...``, "
                      f"``{config._variable(key)}``", "",
                      "    " + _doc(config.Config, field.name), ""]
        return _rst(self, lines)


class EnvironmentVariables(Directive):
    """The variables aotc reads besides the keys' ``AOTC_<KEY>``."""

    def run(self) -> list[nodes.Node]:
        from aotc import config

        lines: list[str] = []
        for name, meaning in config.RUNTIME_VARIABLES.items():
            lines += [f"``{name}``", f"    {meaning}", ""]
        return _rst(self, lines)


class CommandLine(Directive):
    """``python -m aotc`` and each subcommand's help, as argparse prints it."""

    def run(self) -> list[nodes.Node]:
        import argparse

        from aotc import cli

        parser = cli._parser()
        lines = ["::", ""] + ["    " + ln for ln in parser.format_help().splitlines()] + [""]
        subparsers = next(a for a in parser._actions
                          if isinstance(a, argparse._SubParsersAction))
        for name, sub in subparsers.choices.items():
            lines += [f".. rubric:: python -m aotc {name}", "", "::", ""]
            lines += ["    " + ln for ln in sub.format_help().splitlines()] + [""]
        return _rst(self, lines)


def setup(app: Any) -> dict[str, Any]:
    app.add_directive("aotc-config-keys", ConfigKeys)
    app.add_directive("aotc-environment", EnvironmentVariables)
    app.add_directive("aotc-command-line", CommandLine)
    return {"parallel_read_safe": True}
