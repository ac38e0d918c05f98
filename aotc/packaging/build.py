"""Module -> exported kernels -> one object + a Cython wrapper -> a setuptools Extension.

:func:`compile_module` is the whole compiler driver for one kernel module. The rest of
this file is aotc's only contact with setuptools: :func:`finalize_distribution_options`
(an entry point setuptools calls for every build; it does nothing unless the project's
pyproject.toml has ``[tool.aotc]``) adds one ordinary ``Extension`` per configured
module, and :class:`AotcBuildExt` renders and compiles the kernels lazily when
``build_ext`` runs, so building an sdist or wheel metadata never traces anything.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import inspect
import os
import sys
import sysconfig
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from types import ModuleType
from typing import Any, NoReturn

from setuptools import Extension
from setuptools.command.build_ext import build_ext

from .. import abi, config
from ..errors import AotcError, BuildError, ConfigError, InternalError, Loc, diagnostic
from ..types import STR
from . import objects, runtime_object, string_choices, wrapper, wrapper_cache
from .layout import EXIT_CONFIG, source_path
from .toolchain import CROSS_CFLAGS, c_compiler, extension_suffix, platform, wheel_platform
from .ufunc_loops import check_program

# -- the compiler driver -----------------------------------------------------------------


class Timer:
    """Seconds spent in each phase of one module's build, for the ``-v`` breakdown."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    @contextlib.contextmanager
    def phase(self, name: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[name] = self.seconds.get(name, 0.0) + time.perf_counter() - start

    def total(self) -> float:
        return sum(self.seconds.values())

    def breakdown(self) -> str:
        return ", ".join(f"{name} {sec:.2f} s" for name, sec in self.seconds.items())


@dataclass(frozen=True)
class BuiltModule:
    """What :func:`compile_module` wrote for one kernel module (paths under build-dir)."""

    name: str
    source: Path  #: the kernel module's ``.py``
    pyx: Path
    header: Path
    objects: tuple[Path, ...]  #: one per target, the baseline's first
    pyi: str  #: stub text; the build writes it next to the extension
    functions: tuple[str, ...]
    timer: Timer  #: the phases so far; build_ext adds Cython's and the C compiler's


def _import_root(path: Path, module_name: str) -> Path:
    return path.parents[len(module_name.split(".")) - 1]


@contextlib.contextmanager
def _first_on_path(directory: Path) -> Iterator[None]:
    sys.path.insert(0, str(directory))
    importlib.invalidate_caches()
    try:
        yield
    finally:
        sys.path.remove(str(directory))


@contextlib.contextmanager
def _chdir(directory: Path) -> Iterator[None]:
    """``contextlib.chdir`` for Python 3.10."""
    previous = os.getcwd()
    os.chdir(directory)
    try:
        yield
    finally:
        os.chdir(previous)


def _user_loc(exc: BaseException, file: Path) -> Loc | None:
    """The innermost traceback frame in the user's file: where their code failed; for a
    SyntaxError, the place Python's parser points at (with its caret)."""
    if isinstance(exc, SyntaxError) and exc.filename and exc.lineno:
        end = (exc.end_offset or 0) - 1 if exc.end_lineno == exc.lineno else -1
        return Loc(exc.filename, exc.lineno, (exc.offset or 0) - 1, end)
    frames = [f for f in traceback.extract_tb(exc.__traceback__)
              if f.filename and Path(f.filename).resolve() == file.resolve()]
    return Loc(str(file), frames[-1].lineno or 0) if frames else None


def load_module(module_name: str, project_root: Path) -> ModuleType:
    """Run the kernel module's Python source (never a built extension shadowing it)."""
    path = source_path(module_name, project_root)
    parent, _, _ = module_name.rpartition(".")
    spec = importlib.util.spec_from_file_location(module_name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    previous = sys.modules.get(module_name)
    with _first_on_path(_import_root(path, module_name)):
        try:
            if parent:
                importlib.import_module(parent)
            sys.modules[module_name] = module
            spec.loader.exec_module(module)
        except AotcError:
            raise
        except Exception as exc:
            text = exc.msg if isinstance(exc, SyntaxError) else exc
            raise BuildError(f"importing '{module_name}' failed: {type(exc).__name__}: {text}",
                             loc=_user_loc(exc, path)) from exc
        finally:
            if previous is None:
                sys.modules.pop(module_name, None)
            else:
                sys.modules[module_name] = previous
    return module


def exported_functions(module: ModuleType) -> list[tuple[str, Any]]:
    """Functions defined in ``module`` and marked ``@aotc.export``, in source order.

    A transformed kernel (``k = aotc.export(aotc.vmap(f))``) is exported under the name
    the module binds it to (once, however many names it has); a function only under its
    own name, so an imported or aliased kernel is not exported twice.
    """
    found: list[tuple[str, Any]] = []
    for name, obj in vars(module).items():
        if getattr(obj, "__aotc_export__", None) is None \
                or getattr(obj, "__module__", None) != module.__name__:
            continue
        if getattr(obj, "__name__", None) == name or (
                getattr(obj, "__aotc_transform__", False)
                and not any(other is obj for _, other in found)):
            found.append((name, obj))
    return found


def _trace_export(module_name: str, name: str, fn: Any, entries: list[tuple[str, Any]],
                  fuse: bool) -> tuple[list[wrapper.Function], wrapper.StringChoice | None]:
    """One export's compiled functions: itself, or with a ``str`` parameter one hidden
    function per string it selects (:mod:`.string_choices`) and the choice among them."""
    info = fn.__aotc_export__
    try:
        position = string_choices.string_position(info.signatures)
    except AotcError as err:
        raise err.with_context(loc=info.loc, kernel=name) from None
    if position is None:
        return [_trace_function(module_name, name, fn, entries, fuse)], None
    where = string_choices.choices(fn, position)
    made: list[wrapper.Function] = []
    table: list[tuple[str, str]] = []
    failures: list[AotcError] = []
    for j, (value, variant) in enumerate(string_choices.bound_variants(fn, where)):
        try:
            made.append(_trace_function(module_name, f"_aotcs_{name}_{j}", variant, entries,
                                        fuse))
            table.append((value, made[-1].name))
        except AotcError as err:
            failures.append(err)
            table.append((value, repr(str(err).splitlines()[0])))
    if not made:  # not the strings: the kernel itself does not build
        raise failures[-1]
    first = made[0]
    stub = replace(first, name=name, param_names=(
        *first.param_names[:position], where.param, *first.param_names[position:]),
        overloads=tuple(replace(ov, signature=replace(ov.signature, params=(
            *ov.signature.params[:position], STR, *ov.signature.params[position:])))
            for ov in first.overloads))
    return made, wrapper.StringChoice(name, where.param, position, tuple(table),
                                      tuple(f.name for f in made), stub)


def _trace_function(module_name: str, name: str, fn: Any, entries: list[tuple[str, Any]],
                    fuse: bool = True) -> wrapper.Function:
    from ..pipeline import Overloads

    info = fn.__aotc_export__
    overloads: list[wrapper.Overload] = []
    param_names: tuple[str, ...] | None = None
    defaults: tuple[Any, ...] = ()
    stages = Overloads(fn, info.signatures, name, twins=info.ufunc is None)
    try:
        signatures = stages.signatures
    except AotcError as err:
        raise err.with_context(loc=info.loc, kernel=name) from None
    for k, signature in enumerate(signatures):
        try:
            traced = stages(signature).kernel
            program = stages(signature).optimize(fuse=fuse).program
            if info.ufunc is not None:
                check_program(name, info.ufunc, program, traced.result_kind)
        except AotcError as err:  # each phase reports its own bugs as InternalError
            raise err.with_context(loc=info.loc, kernel=name) from None
        if param_names is not None and not _one_is_prefix(traced.param_names, param_names):
            raise BuildError(f"overloads take different parameters: {param_names} and "
                             f"{traced.param_names}", kernel=name, loc=info.loc)
        if param_names is None or len(traced.param_names) > len(param_names):
            param_names, defaults = traced.param_names, traced.defaults
        prefix = abi.symbol_prefix(module_name, name, k)
        entries.append((prefix, program))
        overloads.append(wrapper.Overload(prefix, replace(traced.signature,
                                                          params=signature.params),
                                          program, traced.result_kind, traced.result_tree))
    names = tuple(param_names or ())
    return wrapper.Function(name, names, fn.__doc__, tuple(overloads),
                            _trailing_defaults(names, defaults), info.ufunc)


def _one_is_prefix(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    """Overloads may take fewer trailing parameters (optional ones in signature strings)."""
    return a[:len(b)] == b[:len(a)]


def _trailing_defaults(names: tuple[str, ...], defaults: tuple[Any, ...]
                       ) -> tuple[tuple[str, str], ...]:
    """The defaults the wrapper's ``def`` declares: the run of parameters at the end whose
    defaults are literals (Python requires defaults to come last)."""
    out: list[tuple[str, str]] = []
    for name, value in reversed(list(zip(names, defaults, strict=True))):
        text = wrapper.literal_default(value) if value is not inspect.Parameter.empty else None
        if text is None:
            break
        out.append((name, text))
    return tuple(reversed(out))


def target_spec(cfg: config.Config, name: str | None = None) -> Any:
    """The codegen target for one of a config's targets (its first by default): its
    CPU, with opt-level and fast-math applied."""
    from ..codegen import TargetSpec
    from ..codegen.targets import for_triple

    name = cfg.targets[0] if name is None else name
    arch = platform(cfg).arch
    if name == "native" and platform(cfg).cross:
        raise ConfigError(f"[tool.aotc] target = 'native' names this build machine's CPU, "
                          f"and platform = {cfg.platform!r} runs {arch} code",
                          hint="leave target unset for the platform's default levels: "
                               + ", ".join(config.DEFAULT_TARGETS_BY_ARCH.get(arch, ())))
    try:
        spec = TargetSpec.parse(name, opt_level=cfg.opt_level, fast_math=cfg.fast_math,
                                parallel=cfg.parallel)
    except ValueError as err:
        raise ConfigError(f"[tool.aotc] target = {name!r}: {err}",
                          hint="use one of the CPU names above, or 'native'") from None
    if spec.isa.arch != arch:
        raise ConfigError(f"[tool.aotc] target = {name!r} is an {spec.isa.arch} CPU, and the "
                          f"extensions are for {arch}",
                          hint="use one of " + ", ".join(for_triple(arch).cpu_names()))
    return spec


def build_targets(cfg: config.Config) -> list[objects.Target]:
    """Every target of the config, the first being the baseline."""
    return objects.make_targets(cfg.targets, [target_spec(cfg, n) for n in cfg.targets])


def _write(path: Path, data: bytes) -> None:
    """Write only when the content changed, so unchanged kernels do not relink."""
    if path.is_file() and path.read_bytes() == data:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def _log(cfg: config.Config, message: str) -> None:
    if cfg.verbose:
        print(f"aotc: {message}", file=sys.stderr)


def compile_module(module_name: str, project_root: str | os.PathLike[str],
                   cfg: config.Config,
                   on_wrapper: Callable[[Path, Path], None] | None = None) -> BuiltModule:
    """Trace, optimize and compile every export of one module; render its wrapper.

    Writes ``<build-dir>/<pkg path>/<mod>.pyx``, ``<mod>.h`` and one ``_aotc_<mod>*.o``
    per target (paths relative to ``project_root`` when build-dir is) and returns them.
    ``on_wrapper(pyx, header)`` is called once the wrapper is written, before the kernels
    are compiled.
    """
    root = Path(project_root)
    timer = Timer()
    _log(cfg, f"importing {module_name}")
    with timer.phase("import"):
        module = load_module(module_name, root)
    exports = exported_functions(module)
    if not exports:
        raise BuildError(f"module '{module_name}' exports no kernels",
                         hint="mark functions with @aotc.export, or remove the module from "
                              "[tool.aotc] modules")
    entries: list[tuple[str, Any]] = []
    functions = []
    kernels: dict[str, str] = {}  # symbol prefix -> kernel name, for error messages
    choices: list[wrapper.StringChoice] = []
    for name, fn in exports:
        _log(cfg, f"tracing {module_name}.{name} ({len(fn.__aotc_export__.signatures)} "
                  "signature(s))")
        with timer.phase("trace"):
            made, choice = _trace_export(module_name, name, fn, entries, cfg.fusion)
        functions += made
        choices += [choice] if choice is not None else []
        kernels.update((ov.prefix, name) for f in made for ov in f.overloads)
    *package, leaf = module_name.split(".")
    out_dir = Path(cfg.build_dir, *package)
    if not out_dir.is_absolute():
        out_dir = root / out_dir
    targets = build_targets(cfg)

    objfiles = [out_dir / f"_aotc_{leaf}{t.suffix}.o" for t in targets]
    source = source_path(module_name, root).relative_to(root).as_posix()
    pyx, header = out_dir / f"{leaf}.pyx", out_dir / f"{leaf}.h"
    rendered = wrapper.render_module(module_name, functions, source=source, header=header.name,
                                     object_name=objfiles[0].name, doc=module.__doc__,
                                     targets=targets, choices=choices)
    _write(header, rendered.header.encode())
    for name, text in wrapper.declarations().items():  # what the .pyx cimports and includes
        _write(out_dir / name, text)
    _write(pyx, rendered.pyx.encode())
    _write(out_dir / f"{leaf}.pyi", rendered.pyi.encode())  # kept for inspection
    if on_wrapper is not None:  # (the wrapper is compiled while the kernels are)
        on_wrapper(pyx, header)

    def locate(prefix: str, err: AotcError) -> AotcError:
        name = kernels[prefix]
        return err.with_context(kernel=name, loc=dict(exports)[name].__aotc_export__.loc)

    with timer.phase("codegen"):
        parallel = {prefix: info.parallel for prefix, name in kernels.items()
                    if (info := dict(exports)[name].__aotc_export__).parallel is not None}
        twins = frozenset(ov.prefix for f in functions for ov in f.overloads
                          if ov.signature.fallback)
        parts, compiled, total = objects.compile_targets(
            entries, targets, out_dir / f"_aotc_{leaf}.cache", locate, parallel,
            baseline_only=twins)
    _log(cfg, f"compiled {compiled} of {total} entry point(s) for "
              f"{', '.join(cfg.targets)} ({total - compiled} unchanged)")
    with timer.phase("link"):
        for target, objfile in zip(targets, objfiles, strict=True):
            objects.join_objects(parts[target.name], objfile, c_compiler(cfg))
    return BuiltModule(module_name, root / source, pyx, header, tuple(objfiles), rendered.pyi,
                       tuple(fn.name for fn in functions), timer)


def report(err: AotcError, verbose: bool = False) -> NoReturn:
    """Show a build error the way a compiler does: without a Python traceback, unless it
    is an internal error and ``verbose`` (``-v``, ``-C verbose=true``) asks for it."""
    print(f"aotc: error: {diagnostic(err, verbose)}", file=sys.stderr)
    raise SystemExit(EXIT_CONFIG if isinstance(err, ConfigError) else 1)


# -- setuptools: one Extension per module, one build_ext --------------------------------


@dataclass(frozen=True)
class Plan:
    """What finalize_distribution_options decided; kept on the Distribution."""

    root: Path
    config: config.Config


def _relative(path: Path, root: Path) -> str:
    """Paths as setuptools sees them: relative to the project when possible."""
    with contextlib.suppress(ValueError):
        return path.relative_to(root).as_posix()
    return str(path)


def _link_build_ext() -> Any:
    """distutils' ``build_ext`` (setuptools' own runs Cython on every extension first,
    when Cython is installed, even one with no source left to translate)."""
    for base in build_ext.__mro__:
        if base.__module__.endswith("distutils.command.build_ext"):
            return base
    return build_ext


def _wrapper_flags(root: Path) -> tuple[str, list[str]]:
    """The C flags of the wrappers and the runtime: the one naming the project's place
    (which maps it to '.', so the object is the same wherever the project is) and the rest.

    Small, path-free binaries: no debug info, and file names relative to the project.
    Generated code compiles without warnings (-Wsign-compare comes from Python's own
    CFLAGS and would read like the user's fault). -Og: the wrapper's calls measure the
    same as at -O1 or -O2 (Python's own overhead dominates), and gcc takes 40% less time
    over it."""
    import numpy

    return (f"-ffile-prefix-map={root.resolve()}=.",
            ["-g0", f"-ffile-prefix-map={Path(numpy.__file__).parent}=numpy",
             "-Wno-unused-function", "-Wno-unreachable-code", "-Wno-sign-compare", "-Og"])


class AotcBuildExt(build_ext):  # type: ignore[misc]  # setuptools is untyped
    """``build_ext`` that renders and compiles the kernels first, then builds as usual."""

    def _plan(self) -> Plan | None:
        return getattr(self.distribution, "aotc_plan", None)

    def _ours(self) -> list[Extension]:
        plan = self._plan()
        return [e for e in self.extensions if plan and e.name in plan.config.modules]

    def run(self) -> None:
        plan = self._plan()
        built: dict[str, BuiltModule] = {}
        self._runtime: wrapper_cache.Job | None = None
        self._wrappers: dict[str, wrapper_cache.Job] = {}
        self._worker: wrapper_cache.Worker | None = None
        if plan and not self.inplace and "native" in plan.config.targets:
            print("aotc: warning: target 'native' compiles for this build machine's CPU "
                  "only: the wheel raises ImportError on CPUs without its features; for "
                  f"a wheel to share, keep the default targets "
                  f"({', '.join(config.DEFAULT_TARGETS)})",
                  file=sys.stderr)
        try:
            for ext in self._ours():
                assert plan is not None  # _ours() is empty without a plan
                if self._runtime is None:
                    self._runtime = self._start_runtime(plan)
                built[ext.name] = self._prepare(ext, plan)
        except AotcError as err:
            self._stop_worker()
            report(err, plan is not None and plan.config.verbose)
        except Exception as exc:  # outside every phase's own boundary: still aotc's bug
            self._stop_worker()
            report(InternalError(exc, phase="the build"), plan is not None
                   and plan.config.verbose)
        try:
            super().run()
        finally:
            self._stop_worker()
        for name, mod in built.items():
            stem = name.rpartition(".")[2]
            if self.inplace:  # setuptools copied the .so to the source tree; the stub follows
                _write(mod.source.with_name(stem + ".pyi"), mod.pyi.encode())
                # Newer than its source, even when nothing was linked again (an edit that
                # changes no kernel): the module trusts an extension no older than it.
                os.utime(self.get_ext_fullpath(name))
                package = mod.source.parent
            else:  # the wheel holds the extension only, not the Python source it replaces
                py = Path(self.get_ext_fullpath(name)).with_name(stem + ".py").resolve()
                if py.is_relative_to(Path(self.build_lib).resolve()) and py != mod.source.resolve():
                    py.unlink(missing_ok=True)
                package = py.parent
            if "." in name:  # PEP 561: type checkers read the stubs of a typed package,
                (package / "py.typed").touch()  # installed or editable alike

    def _prepare(self, ext: Extension, plan: Plan) -> BuiltModule:
        import numpy

        root = plan.root

        def start_wrapper(pyx: Path, header: Path) -> None:
            """Start compiling the module's wrapper (:mod:`.wrapper_cache`)."""
            project, flags = _wrapper_flags(root)
            where = _relative(pyx, root)
            command = self._compile_command(plan, [numpy.get_include(),
                                                   _relative(header.parent, root)])
            with _chdir(root):
                # (the project's place maps to '.': the same object wherever it is)
                self._wrappers[ext.name] = wrapper_cache.start(
                    ext.name, Path(where), self._wrapper_object(where), command,
                    [project, *flags], [where, *flags],
                    [pyx, header, *map(header.with_name, wrapper.declarations())],
                    self._the_worker, force=self.force)
            if self._wrappers[ext.name].pending:
                _log(plan.config, f"cythonizing and compiling {where}, aside")

        mod = compile_module(ext.name, root, plan.config, on_wrapper=start_wrapper)
        ext.sources = []  # (the wrapper's object is made aside: start_wrapper)
        ext.extra_objects = [_relative(obj, root) for obj in mod.objects]
        ext.depends = [*ext.extra_objects, _relative(mod.header, root)]
        ext.libraries = ["m"]
        ext.aotc_built = mod
        return mod

    def _compile_command(self, plan: Plan, include_dirs: list[str]) -> list[str]:
        """The C compiler as setuptools would run it on a wrapper (Python's own flags;
        zig cc for a pinned glibc), with the include options for ``include_dirs``."""
        from distutils.ccompiler import new_compiler
        from distutils.sysconfig import customize_compiler

        compiler = new_compiler(compiler=self.compiler, force=self.force)
        customize_compiler(compiler)
        command = self._toolchain(plan, compiler.compiler_so)  # type: ignore[attr-defined]
        paths = sysconfig.get_paths()
        includes = dict.fromkeys([*include_dirs, paths["include"], paths["platinclude"]])
        return [*command, *(f"-I{d}" for d in includes)]

    @staticmethod
    def _toolchain(plan: Plan, command: list[str], *, link: bool = False) -> list[str]:
        """Python's compile (or, with ``link``, link) ``command`` for the config's
        platform: as it is for this machine, zig cc with Python's flags for a pinned
        glibc, zig cc with only the flags every architecture takes for another platform
        (:mod:`.toolchain`)."""
        target = platform(plan.config)
        if not target.glibc:
            return list(command)
        if not target.cross:
            return [*c_compiler(plan.config), *command[1:]]
        return [*c_compiler(plan.config), *(["-shared"] if link else CROSS_CFLAGS)]

    def get_ext_filename(self, fullname: str) -> str:
        """An extension's file name; for another platform, with that platform's suffix
        (``.cpython-311-aarch64-linux-gnu.so``), which its Python imports. (distutils
        asks with the last part of the dotted name; every extension of a cross build is
        aotc's: no other can be compiled for that platform here.)"""
        name: str = super().get_ext_filename(fullname)
        plan = self._plan()
        if plan is None:
            return name
        suffix = extension_suffix(plan.config)
        here = str(sysconfig.get_config_var("EXT_SUFFIX"))
        return name if suffix is None else name.removesuffix(here) + suffix

    def _wrapper_object(self, pyx: str) -> Path:
        """Where the object of the wrapper ``pyx`` (relative to the project) goes."""
        return Path(self.build_temp, pyx).with_suffix(".o")

    def _the_worker(self) -> wrapper_cache.Worker:
        """The build's wrapper worker, started at the first call."""
        if self._worker is None:
            self._worker = wrapper_cache.Worker()
        return self._worker

    def _stop_worker(self) -> None:
        """Stop the worker, when the build ends or fails (:meth:`.Worker.close`)."""
        if self._worker is not None:
            self._worker.close()

    def build_extension(self, ext: Extension) -> None:
        mod = getattr(ext, "aotc_built", None)
        if mod is None:
            super().build_extension(ext)
            return
        linker, compiler = self.compiler.linker_so, self.compiler.compiler_so
        # No build-machine paths in the binary: Python's LDSHARED may carry an rpath to
        # the build interpreter's lib dir, which an extension does not need.
        self.compiler.linker_so = [a for a in linker if not a.startswith("-Wl,-rpath")]
        plan = self._plan()
        if plan is not None:
            self.compiler.compiler_so = self._toolchain(plan, compiler)
            self.compiler.linker_so = self._toolchain(plan, self.compiler.linker_so,
                                                      link=True)
        try:
            with mod.timer.phase("wrapper"):
                made = self._wrapper_objects(ext)
            ext.extra_objects = [*made, *ext.extra_objects]
            ext.depends = [*ext.depends, *made]
            with mod.timer.phase("cc"):
                # distutils' link of the objects: the layer setuptools puts between runs
                # Cython (when installed) on every build, to find no source to translate.
                _link_build_ext().build_extension(self, ext)
        finally:
            self.compiler.linker_so, self.compiler.compiler_so = linker, compiler
        stub = Path(self.get_ext_fullpath(ext.name)).with_name(mod.name.rpartition(".")[2]
                                                               + ".pyi")
        _write(stub, mod.pyi.encode())  # the stub goes into the wheel next to the extension
        detail = f" ({mod.timer.breakdown()})" if plan and plan.config.verbose else ""
        print(f"aotc: built {mod.name} ({len(mod.functions)} kernels, "
              f"{len(mod.objects)} targets) in {mod.timer.total():.1f} s{detail}",
              file=sys.stderr)

    def _wrapper_objects(self, ext: Extension) -> list[str]:
        """The objects of the module's wrapper and of the shared runtime, once made."""
        plan = self._plan()
        assert plan is not None and self._runtime is not None  # started for our extensions
        try:
            with _chdir(plan.root):
                return [str(job.result().resolve())
                        for job in (self._wrappers[ext.name], self._runtime)]
        except AotcError as err:
            report(err, plan.config.verbose)

    def _start_runtime(self, plan: Plan) -> wrapper_cache.Job:
        """The shared runtime's object, and the wrapper worker started now (so that it is
        ready when the first wrapper is) unless every module's wrapper was made here
        before (a rebuild: most likely none is needed)."""
        with _chdir(plan.root):
            if not all(wrapper_cache.made(self._wrapper_object(e.sources[0]))
                       for e in self._ours()):
                self._the_worker()
        return self._runtime_object(plan)

    def _runtime_object(self, plan: Plan) -> wrapper_cache.Job:
        """Start making the shared runtime's object (:mod:`.runtime_object`) that every
        module's extension links, unless the cache has it: on the wrapper worker, while
        the kernels are traced and compiled here."""
        import numpy

        project, flags = _wrapper_flags(plan.root)
        with _chdir(plan.root):
            job = runtime_object.start(
                Path(plan.config.build_dir, runtime_object.NAME),
                Path(self.build_temp) / f"{runtime_object.NAME}.o",
                self._compile_command(plan, [numpy.get_include()]), [project, *flags], flags,
                self._the_worker, force=self.force)
        if job.pending:
            _log(plan.config, "cythonizing and compiling aotc's runtime (once per toolchain), "
                              "aside")
        return job

    def get_source_files(self) -> list[str]:
        """For the sdist: the kernel sources, not the (not yet rendered) wrappers."""
        plan = self._plan()
        ours = {e.name for e in self._ours()}
        files = [s for e in self.extensions if e.name not in ours for s in e.sources]
        if plan:
            try:
                files += [_relative(source_path(m, plan.root), plan.root) for m in sorted(ours)]
            except AotcError as err:
                report(err)
        return files


def finalize_distribution_options(dist: Any) -> None:
    """setuptools entry point: add the kernel modules of ``[tool.aotc]`` as extensions."""
    if getattr(dist, "aotc_plan", None) is not None:
        return
    root = Path.cwd()
    try:
        cfg = config.load(root)
    except AotcError as err:
        report(err)
    if cfg is None:
        return
    dist.aotc_plan = Plan(root, cfg)
    pyx = {m: Path(cfg.build_dir, *m.split(".")).with_suffix(".pyx") for m in cfg.modules}
    ours = [Extension(m, sources=[pyx[m].as_posix()], language="c") for m in sorted(cfg.modules)]
    dist.ext_modules = [*(dist.ext_modules or []), *ours]
    dist.cmdclass["build_ext"] = AotcBuildExt
    tag = wheel_platform(cfg)
    if tag is not None:  # the platform and glibc the extensions are linked for
        dist.get_option_dict("bdist_wheel").setdefault("plat_name", ("[tool.aotc] platform",
                                                                     tag))
