"""One error hierarchy, and located messages with a caret under the user's source.

Every error the user can cause at build time is an :class:`AotcError`. It carries the
kernel's name and a :class:`Loc`, and renders like a compiler diagnostic::

    kernels.py:12: error in kernel 'rosen': traced value used in Python 'if'
        if x[0] > 0:
           ^
    hint: use np.where(cond, a, b), or aotc.lax.cond

An unexpected exception inside aotc itself (a ``KeyError`` in code generation) is a bug
in aotc, never shown bare: each phase turns it into an :class:`InternalError`, located
the same way and said to be a bug, with the Python traceback only in verbose mode.
"""

from __future__ import annotations

import difflib
import linecache
import os
import sysconfig
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from types import TracebackType


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


class ConfigError(AotcError, ValueError):
    """A bad ``[tool.aotc]`` table or ``-C`` setting."""


class BuildError(AotcError, RuntimeError):
    """The toolchain failed (compiler, linker, Cython)."""


#: Said after every internal compiler error.
REPORT_BUG = "this is a bug in aotc: please report it with the kernel"
_AOTC_DIR = os.path.dirname(os.path.abspath(__file__))


def _in_aotc(filename: str) -> bool:
    return os.path.abspath(filename).startswith(_AOTC_DIR + os.sep)


class InternalError(AotcError, RuntimeError):
    """An unexpected exception raised inside aotc while it compiled a kernel: a bug in
    aotc, not in the kernel. It is located like any error (the equation being compiled,
    or the kernel line being traced), and keeps the original exception, whose traceback
    is shown only in verbose mode (:func:`diagnostic`).

    Each phase converts in one place (:func:`internal_errors`): tracing in
    ``frontend.trace_kernel``, each pass in ``passes.optimize``, code generation in
    ``codegen.module`` (and ``Lowering.run``, which knows the equation).
    """

    def __init__(self, error: BaseException, *, phase: str, loc: Loc | None = None,
                 kernel: str | None = None) -> None:
        super().__init__(f"internal compiler error: {type(error).__name__}: {error}",
                         loc=loc, kernel=kernel)
        self.error = error
        self.phase = phase
        #: The original traceback, formatted now (re-raising may drop ``__cause__``).
        self.details = "".join(traceback.format_exception(type(error), error,
                                                          error.__traceback__))
        self.origin = _origin(error.__traceback__)


def _origin(tb: TracebackType | None) -> str | None:
    """``aotc/codegen/core/context.py:99 in read``: the innermost frame inside aotc."""
    found = None
    for frame in traceback.extract_tb(tb):
        if _in_aotc(frame.filename):
            rel = os.path.relpath(os.path.abspath(frame.filename), os.path.dirname(_AOTC_DIR))
            found = f"{rel}:{frame.lineno} in {frame.name}"
    return found


def equation_loc(tb: TracebackType | None) -> Loc | None:
    """The source location of the innermost equation being worked on where an exception
    was raised: a local ``eqn`` (an IR equation) with a ``loc``, as every pass and
    lowering rule has. For passes, which know no more than their loop variable."""
    found = None
    while tb is not None:
        loc = getattr(tb.tb_frame.f_locals.get("eqn"), "loc", None)
        if isinstance(loc, Loc):
            found = loc
        tb = tb.tb_next
    return found


@contextmanager
def internal_errors(phase: str, *, kernel: str | None = None, loc: Loc | None = None
                    ) -> Iterator[None]:
    """Turn any exception that is not an :class:`AotcError` into an :class:`InternalError`
    of ``phase``, located at ``loc`` or else at the equation being worked on."""
    try:
        yield
    except AotcError:
        raise
    except Exception as exc:
        raise InternalError(exc, phase=phase, kernel=kernel,
                            loc=loc or equation_loc(exc.__traceback__)) from exc


_LIBRARY_DIRS = tuple(sorted({os.path.realpath(sysconfig.get_paths()[k]) + os.sep
                              for k in ("stdlib", "platstdlib", "purelib", "platlib")}))


def tracing_failure(error: Exception, kernel: str) -> AotcError:
    """An unexpected exception that escaped tracing ``kernel``, as an error to report.

    Tracing runs the user's code: an exception raised there (a ``NameError``, a helper's
    own ``ValueError``) is the kernel's, located at its line. One raised inside aotc is
    an :class:`InternalError`, located at the kernel line being traced. Frames in NumPy
    and the standard library decide nothing: the caller that reached them does.
    """
    frames = traceback.extract_tb(error.__traceback__)
    mine = [f for f in frames if _in_aotc(f.filename)
            or not os.path.realpath(f.filename).startswith(_LIBRARY_DIRS)]
    user = [f for f in mine if not _in_aotc(f.filename)]
    loc = None
    if user:
        f = user[-1]
        col = getattr(f, "colno", None)
        end = getattr(f, "end_colno", None) if getattr(f, "end_lineno", None) == f.lineno \
            else None
        loc = Loc(f.filename, f.lineno or 0, -1 if col is None else col,
                  -1 if end is None else end)
    if mine and _in_aotc(mine[-1].filename):
        return InternalError(error, phase="tracing", loc=loc, kernel=kernel)
    return TraceError(f"{type(error).__name__}: {error}", loc=loc, kernel=kernel,
                      hint=_attribute_hint(error))


def _attribute_hint(error: Exception) -> str | None:
    """``did you mean np.cumsum?`` for ``np.cumsun`` (Python 3.11 puts no suggestion in
    an AttributeError's text; its traceback printer makes its own)."""
    if not isinstance(error, AttributeError) or error.name is None or error.obj is None:
        return None
    close = difflib.get_close_matches(error.name, [n for n in dir(error.obj)
                                                   if not n.startswith("_")], n=1)
    if not close:
        return None
    owner = getattr(error.obj, "__name__", None)
    prefix = "np." if owner == "numpy" else f"{owner}." if isinstance(owner, str) else "."
    return f"did you mean {prefix}{close[0]}?"


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
    if isinstance(error, InternalError):
        lines.append(REPORT_BUG)
    return "\n".join(lines)


def diagnostic(error: AotcError, verbose: bool = False) -> str:
    """:func:`render`, and for an internal error where it was raised: with ``verbose`` the
    Python traceback, else how to get it."""
    text = render(error)
    if isinstance(error, InternalError):
        where = f" at {error.origin}" if error.origin else ""
        if verbose:
            text += f"\nnote: raised during {error.phase}{where}:\n{error.details.rstrip()}"
        else:
            text += (f"\nnote: raised during {error.phase}{where}; run with -v (or -C "
                     "verbose=true) for the traceback")
    return text
