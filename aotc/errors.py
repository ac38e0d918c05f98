"""One error hierarchy, and located messages with a caret under the user's source.

Every error the user can cause at build time is an :class:`AotcError`. It carries the
kernel's name and a :class:`Loc`, and renders like a compiler diagnostic::

    kernels.py:12: error in kernel 'rosen': traced value used in Python 'if'
        if x[0] > 0:
           ^
    hint: use np.where(cond, a, b), or aotc.lax.cond
"""

from __future__ import annotations

import linecache
from dataclasses import dataclass


@dataclass(frozen=True)
class Loc:
    """A place in the user's source: file, 1-based line, 0-based column (or -1)."""

    file: str
    line: int
    col: int = -1
    end_col: int = -1

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"

    def source_line(self) -> str:
        return linecache.getline(self.file, self.line).rstrip("\n")


class AotcError(Exception):
    """Base of every error aotc reports to a user."""

    def __init__(self, message: str, *, loc: Loc | None = None, kernel: str | None = None,
                 hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.loc = loc
        self.kernel = kernel
        self.hint = hint

    def with_context(self, *, loc: Loc | None = None, kernel: str | None = None) -> AotcError:
        """Fill in location or kernel where the raiser did not know them."""
        self.loc = self.loc or loc
        self.kernel = self.kernel or kernel
        return self

    def __str__(self) -> str:
        return render(self)


class SignatureError(AotcError, TypeError):
    """A malformed annotation or signature string."""


class TraceError(AotcError, TypeError):
    """The kernel does something that cannot be compiled."""


class UnsupportedError(TraceError):
    """A NumPy function or feature aotc does not compile (yet)."""


class ShapeError(AotcError, ValueError):
    """Shapes that can never agree, found at build time."""


class ConfigError(AotcError, ValueError):
    """A bad ``[tool.aotc]`` table or ``-C`` setting."""


class BuildError(AotcError, RuntimeError):
    """The toolchain failed (compiler, linker, Cython)."""


def render(error: AotcError) -> str:
    """The located, multi-line text of an error, without the ``aotc: error:`` prefix."""
    head = error.message
    if error.kernel:
        head = f"in kernel '{error.kernel}': {head}"
    lines = []
    if error.loc is not None:
        lines.append(f"{error.loc}: {head}")
        source = error.loc.source_line()
        if source:
            stripped = source.lstrip()
            indent = len(source) - len(stripped)
            lines.append("    " + stripped)
            if error.loc.col >= indent:
                width = max(1, error.loc.end_col - error.loc.col) if error.loc.end_col > 0 else 1
                lines.append("    " + " " * (error.loc.col - indent) + "^" * width)
    else:
        lines.append(head)
    if error.hint:
        lines.append(f"hint: {error.hint}")
    return "\n".join(lines)
