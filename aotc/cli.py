"""``python -m aotc``: build extensions in place, or look inside the compiler.

    python -m aotc build [PROJECT]          compile [tool.aotc] modules next to their sources
    python -m aotc inspect MOD:FN [--ir] [--passes] [--llvm] [--asm] [--save-ir FILE]
    python -m aotc opt FILE [-p PASS,PASS...]   run passes on IR text, print the result
    python -m aotc cache info|clear         aotc.jit's object cache (aotc.packaging.object_cache)
    python -m aotc convert FILE [-i | -o OUT]   Pythran/numba.pycc exports to @aotc.export
    python -m aotc annotate [-n] SCRIPT [ARG...]  run SCRIPT, then write what aotc.jit
                                            compiled into the sources as @aotc.export

``inspect`` takes ``package.module:function`` (importable from the current directory or
its ``src/``) or ``path/to/file.py:function``; ``--save-ir`` writes its traced IR, which
``opt`` reads back (:mod:`aotc.ir_text`) to replay passes on. Every error is printed as
``aotc: error: …`` with exit status 2, never as a traceback; an internal compiler error
(a bug in aotc) shows its Python traceback with ``-v``.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from . import config
from .errors import AotcError, ConfigError, InternalError, diagnostic, render
from .packaging import layout, object_cache, uptodate

EXIT_ERROR = 2


def _fail(message: str) -> int:
    print(f"aotc: error: {message}", file=sys.stderr)
    return EXIT_ERROR


# -- build ---------------------------------------------------------------------------------

def _overrides(args: argparse.Namespace) -> dict[str, Any]:
    given = {"target": args.target, "opt-level": args.opt_level,
             "verbose": True if args.verbose else None,
             "fusion": False if args.no_fusion else None}
    return {k: v for k, v in given.items() if v is not None}


def cmd_build(args: argparse.Namespace) -> int:
    """Run setuptools' ``build_ext --inplace`` with aotc's extensions, in this process.

    A build that a kernel fails removes the extensions an earlier build left next to the
    sources: otherwise the stale ``.so`` would keep shadowing the edited source. One that
    its configuration stops keeps them: no source changed."""
    root = Path(args.project).resolve()
    if not (root / "pyproject.toml").is_file():
        return _fail(f"{root} has no pyproject.toml")
    with config.config_settings_scope(_overrides(args)):
        try:
            cfg = config.load(root)
        except AotcError as err:
            return _fail(render(err))
        if cfg is None:
            return _fail(f"{root / 'pyproject.toml'} has no [tool.aotc] table")
        built = {m: layout.inplace_artifacts(m, root) for m in cfg.modules}
        if uptodate.up_to_date(root, cfg, built):
            for path in (p for paths in built.values() for p in paths):
                os.utime(path)  # newer than its (touched, unchanged) source, as if rebuilt
            print(f"aotc: {', '.join(cfg.modules)} up to date in {root}")
            return 0
        status = _build_in_place(root, args.verbose)
    if status == layout.EXIT_CONFIG:
        return EXIT_ERROR
    if status != 0:
        for module in cfg.modules:
            stale = layout.inplace_artifacts(module, root)
            for path in stale:
                path.unlink()
            if stale:
                print(f"aotc: removed {', '.join(p.name for p in stale)} left by an earlier "
                      f"build, so 'import {module}' runs the Python source", file=sys.stderr)
        return status
    uptodate.record(root, cfg)
    print(f"aotc: built {', '.join(cfg.modules)} in {root}")
    return 0


def _build_in_place(root: Path, verbose: bool) -> int:
    from setuptools.dist import Distribution
    from setuptools.errors import BaseError, CCompilerError

    from .packaging import build

    previous = os.getcwd()
    os.chdir(root)
    try:
        quiet = [] if verbose else ["-q"]
        dist = Distribution({"script_name": "aotc",
                             "script_args": [*quiet, "build_ext", "--inplace"]})
        dist.parse_config_files()
        build.finalize_distribution_options(dist)  # no-op if the entry point ran
        dist.parse_command_line()
        dist.run_commands()
    except (BaseError, CCompilerError) as exc:
        return _fail(str(exc))
    except SystemExit as exc:  # build.report() already printed the error
        if exc.code in (0, None):
            return 0
        if isinstance(exc.code, str):
            return _fail(exc.code)
        return layout.EXIT_CONFIG if exc.code == layout.EXIT_CONFIG else EXIT_ERROR
    finally:
        os.chdir(previous)
    return 0


# -- inspect -------------------------------------------------------------------------------

def _load_function(spec: str) -> tuple[str, Any]:
    from .packaging import build

    module_part, sep, name = spec.rpartition(":")
    if not sep or not module_part or not name:
        raise ConfigError(f"'{spec}' is not module:function", hint="for example "
                          "'python -m aotc inspect mypkg.kernels:rosen --ir'")
    if module_part.endswith(".py"):
        path = Path(module_part).resolve()
        if not path.is_file():
            raise ConfigError(f"{module_part}: no such file")
        module = build.load_module(path.stem, path.parent)
    else:
        module = build.load_module(module_part, Path.cwd())
    fn = getattr(module, name, None)
    if fn is None or getattr(fn, "__aotc_export__", None) is None:
        exported = ", ".join(n for n, _ in build.exported_functions(module)) or "none"
        raise ConfigError(f"'{name}' is not an @aotc.export function of {module.__name__} "
                          f"(exported: {exported})")
    return module.__name__, fn


def _section(title: str, text: str) -> None:
    print(f";; ---- {title} " + "-" * max(4, 72 - len(title)))
    print(text.rstrip("\n"))


def _string_variants(fn: Any) -> list[tuple[Any, str]]:
    """What the build compiles of ``fn``: itself, or one function per string its ``str``
    parameter selects (:mod:`aotc.packaging.string_choices`), each with its label."""
    from .packaging import string_choices

    at = string_choices.string_position(fn.__aotc_export__.signatures)
    if at is None:
        return [(fn, "")]
    where = string_choices.choices(fn, at)
    return [(bound, f" [{where.param}=" + (
        "any other string]" if value == string_choices.STAND_IN else f"{value!r}]"))
        for value, bound in string_choices.bound_variants(fn, where)]


def cmd_inspect(args: argparse.Namespace) -> int:
    import inspect

    from .abi import symbol_prefix
    from .packaging import build
    from .packaging.alias_twins import described
    from .passes import optimize
    from .pipeline import Overloads

    module_name, fn = _load_function(args.function)
    params = list(inspect.signature(fn).parameters)
    table = config.read_pyproject(Path.cwd()) or {"modules": [module_name]}
    cfg = config.parse(table, settings=_overrides(args))
    wanted = [flag for flag in ("ir", "passes", "llvm", "asm") if getattr(args, flag)] or ["ir"]
    entries = []
    overloads = [(stages, signature, shown) for variant, shown in _string_variants(fn)
                 for stages in [Overloads(variant, variant.__aotc_export__.signatures,
                                          fn.__name__)]
                 for signature in stages.signatures]  # what the build compiles: twins too
    signatures = [signature for _, signature, _ in overloads]
    for k, (stages, signature, shown) in enumerate(overloads):
        traced = stages(signature).kernel
        twin = " (broadcast twin)" if signature.stretches else \
            f" (alias twin: {described(signature.aliases, params)})" if signature.aliases else ""
        label = f"{fn.__name__}{shown} :: {signature}{twin}"
        if args.save_ir:
            path = Path(args.save_ir)
            if len(signatures) > 1:  # one file per overload: rosen.0.ir, rosen.1.ir...
                path = path.with_name(f"{path.stem}.{k}{path.suffix}")
            try:
                path.write_text(str(traced.program) + "\n")
            except OSError as exc:
                return _fail(f"{path}: {exc.strerror or exc}")
            print(f"aotc: saved the traced IR of {label} to {path}", file=sys.stderr)
        if "ir" in wanted or "passes" in wanted:
            _section(f"{label}: traced", str(traced.program))
        show: Callable[[str, Any], None] | None = None
        if "passes" in wanted:
            def show(name: str, program: Any, label: str = label) -> None:
                _section(f"{label}: after {name}", str(program))
        program = optimize(traced.program, fuse=cfg.fusion, trace=show)
        if "ir" in wanted and "passes" not in wanted:
            _section(f"{label}: optimized", str(program))
        entries.append((symbol_prefix(module_name, fn.__name__, k), program))
    if "llvm" in wanted or "asm" in wanted:
        from . import codegen

        name = cfg.targets[0]  # the first target: --target picks another
        target = build.target_spec(cfg, name)
        if "llvm" in wanted:
            _section(f"LLVM IR ({name})", codegen.emit_llvm(entries, target))
        if "asm" in wanted:
            _section(f"assembly ({name})", codegen.emit_asm(entries, target))
    return 0


# -- opt -----------------------------------------------------------------------------------

def cmd_opt(args: argparse.Namespace) -> int:
    """Read a program as IR text, run the passes named in order, print the result."""
    from .errors import internal_errors
    from .ir import VerifyError, verify
    from .ir_text import parse_program
    from .passes import PIPELINE

    passes = dict(PIPELINE)
    names = [n.strip() for n in args.passes.split(",") if n.strip()] \
        if args.passes is not None else list(passes)
    unknown = [n for n in names if n not in passes]
    if unknown:
        return _fail(f"unknown pass{'es' if len(unknown) > 1 else ''} "
                     f"{', '.join(map(repr, unknown))} (the passes: {', '.join(passes)})")
    try:
        text = sys.stdin.read() if args.file == "-" else Path(args.file).read_text()
    except OSError as exc:
        return _fail(f"{args.file}: {exc.strerror or exc}")
    try:
        program = parse_program(text)
        verify(program)
    except (ValueError, VerifyError) as err:
        return _fail(f"{args.file}: {err}")
    for name in names:
        with internal_errors(f"pass '{name}'", kernel=program.name):
            program = passes[name](program)
            verify(program)
    print(program)
    return 0


def cmd_cache(args: argparse.Namespace) -> int:
    if args.action == "clear":
        removed = object_cache.clear()
        print(f"{object_cache.cache_dir()}: removed {removed} objects")
    else:
        print(object_cache.info())
    return 0


def cmd_convert(args: argparse.Namespace) -> int:
    """Print (or write) the module with its exports made ``@aotc.export`` lines; what
    stays as it was goes to stderr, each with its line."""
    from .migrate import convert_source

    path = Path(args.file)
    try:
        converted = convert_source(path.read_text(encoding="utf-8"))
    except OSError as exc:
        return _fail(f"{path}: {exc.strerror or exc}")
    except SyntaxError as exc:
        return _fail(f"{path}:{exc.lineno}: {exc.msg}")
    for note in converted.notes:
        print(f"aotc: {path}: {note}", file=sys.stderr)
    if not converted.functions:
        return _fail(f"{path}: no '#pythran export' comment or numba.pycc "
                     "'@cc.export' decorator to convert")
    out = path if args.in_place else Path(args.output) if args.output else None
    if out is None:
        sys.stdout.write(converted.text)
    else:
        out.write_text(converted.text, encoding="utf-8")
    print(f"aotc: converted {', '.join(converted.functions)}"
          f"{f' into {out}' if out else ''}; list the module in [tool.aotc] modules "
          "to build it", file=sys.stderr)
    return 0


def cmd_annotate(args: argparse.Namespace) -> int:
    """Run the script as ``python SCRIPT ARG...`` would, then give each function it
    called through a signature-less ``aotc.jit`` its ``@aotc.export`` line."""
    import difflib
    import runpy

    from .migrate import annotate_source
    from .packaging.staging import COMPILED

    script = Path(args.script)
    if not script.is_file():
        return _fail(f"{script}: no such file")
    argv, sys.argv = sys.argv, [str(script), *args.args]
    sys.path.insert(0, str(script.resolve().parent))
    try:
        runpy.run_path(str(script), run_name="__main__")
    except SystemExit as exc:
        if exc.code not in (0, None):
            return _fail(f"{script} exited with {exc.code!r}: nothing annotated")
    finally:
        sys.argv = argv
    by_file: dict[Path, dict[int, list[str]]] = {}
    for (filename, line), signatures in COMPILED.items():
        by_file.setdefault(Path(filename), {})[line] = signatures
    if not by_file:
        return _fail(f"{script} called no function through aotc.jit: nothing to annotate")
    for path, compiled in sorted(by_file.items()):
        before = path.read_text(encoding="utf-8")
        done = annotate_source(before, compiled)
        for note in done.notes:
            print(f"aotc: {path}: {note}", file=sys.stderr)
        if args.dry_run:
            sys.stdout.writelines(difflib.unified_diff(
                before.splitlines(keepends=True), done.text.splitlines(keepends=True),
                str(path), str(path)))
        elif done.functions:
            path.write_text(done.text, encoding="utf-8")
        if done.functions:
            print(f"aotc: {path}: {', '.join(done.functions)} "
                  f"{'would be' if args.dry_run else 'now'} @aotc.export", file=sys.stderr)
    return 0


# -- main ----------------------------------------------------------------------------------

def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m aotc", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)

    b = sub.add_parser("build", help="build the [tool.aotc] extensions in place")
    b.add_argument("project", nargs="?", default=".", help="project directory (default: .)")
    b.set_defaults(run=cmd_build)

    i = sub.add_parser("inspect", help="show a kernel's IR, passes, LLVM IR or assembly")
    i.add_argument("function", help="package.module:function or path/to/file.py:function")
    i.add_argument("--ir", action="store_true", help="IR after tracing and optimization")
    i.add_argument("--passes", action="store_true", help="IR after tracing and each pass")
    i.add_argument("--llvm", action="store_true", help="optimized LLVM IR")
    i.add_argument("--asm", action="store_true", help="assembly")
    i.add_argument("--save-ir", metavar="FILE", help="write the traced IR to FILE (one "
                   "file per overload: FILE's name with .0, .1...), for 'opt' to replay")
    i.set_defaults(run=cmd_inspect)

    o = sub.add_parser("opt", help="run passes on a program's IR text and print the result")
    o.add_argument("file", help="IR text, as 'inspect --save-ir' writes it ('-': stdin)")
    o.add_argument("-p", "--passes", metavar="PASS,...",
                   help="passes to run, in order (default: the whole pipeline)")
    o.add_argument("-v", "--verbose", action="store_true", help="tracebacks of internal errors")
    o.set_defaults(run=cmd_opt)

    c = sub.add_parser("cache", help="show or empty aotc.jit's object cache")
    c.add_argument("action", choices=("info", "clear"))
    c.set_defaults(run=cmd_cache)

    v = sub.add_parser("convert", help="turn '#pythran export' comments and numba.pycc "
                       "'@cc.export' decorators into @aotc.export lines")
    v.add_argument("file", help="the module to convert")
    where = v.add_mutually_exclusive_group()
    where.add_argument("-i", "--in-place", action="store_true", help="rewrite FILE")
    where.add_argument("-o", "--output", metavar="OUT", help="write to OUT (default: stdout)")
    v.set_defaults(run=cmd_convert)

    a = sub.add_parser("annotate", help="run a script, then write what aotc.jit compiled "
                       "into the sources as @aotc.export lines")
    a.add_argument("-n", "--dry-run", action="store_true",
                   help="print the edit as a diff; change no file")
    a.add_argument("script", help="the program to run (as 'python SCRIPT ARG...')")
    a.add_argument("args", nargs=argparse.REMAINDER, help="its arguments")
    a.set_defaults(run=cmd_annotate)

    for p in (b, i):
        p.add_argument("--target", help="CPU to compile for (default: [tool.aotc] target)")
        p.add_argument("--opt-level", type=int, choices=range(4), help="LLVM -O level")
        p.add_argument("--no-fusion", action="store_true",
                       help="every operation its own loop (the unfused baseline)")
        p.add_argument("-v", "--verbose", action="store_true", help="print each build step")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        status: int = args.run(args)
        return status
    except AotcError as err:  # InternalError too: located, traceback only with -v
        return _fail(diagnostic(err, getattr(args, "verbose", False)))
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # a bug in aotc outside a kernel's compilation
        return _fail(diagnostic(InternalError(exc, phase=f"'{args.command}'"),
                                getattr(args, "verbose", False)))
