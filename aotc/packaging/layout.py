"""Where a kernel module's files are, and what a build's exit status says: what the
command line needs before it decides to build (this loads no compiler)."""

from __future__ import annotations

from pathlib import Path

from ..errors import AotcError, BuildError

#: The exit status of a build stopped by its configuration, not by a kernel: what an
#: earlier build left is still right for the sources, so ``python -m aotc build`` keeps it.
EXIT_CONFIG = 3


def source_path(module_name: str, project_root: Path) -> Path:
    """The ``.py`` of a kernel module, in a flat or a ``src/`` layout."""
    rel = Path(*module_name.split("."))
    for base in (project_root, project_root / "src"):
        if (base / rel.with_suffix(".py")).is_file():
            return base / rel.with_suffix(".py")
        if (base / rel / "__init__.py").is_file():
            raise BuildError(f"kernel module '{module_name}' is a package",
                             hint=f"move the kernels into a module such as '{module_name}."
                                  "kernels'; an extension cannot replace a package")
    raise BuildError(
        f"kernel module '{module_name}' not found: expected {rel.with_suffix('.py')} under "
        f"{project_root} or {project_root / 'src'}",
        hint="check 'modules' in [tool.aotc] of pyproject.toml",
    )


def inplace_artifacts(module_name: str, project_root: Path) -> list[Path]:
    """Extensions (any ABI tag) and stubs an in-place build put next to a module's source."""
    try:
        source = source_path(module_name, project_root)
    except AotcError:
        return []
    leaf = source.stem
    found = [p for p in source.parent.glob(f"{leaf}.*") if p.suffix in (".so", ".pyd")
             and p.name.split(".")[0] == leaf]
    stub = source.with_suffix(".pyi")
    return sorted(found) + ([stub] if stub.is_file() and found else [])
