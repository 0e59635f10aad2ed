"""Which files of a project the scan reads, and how: Python, C/C++/CUDA, launch scripts.

The walk never follows a link (a project's link may point anywhere, a loop included), never
enters a virtual environment, an installed-packages folder or a vendored copy of another
project (their code is not the project's to fix, and it is most of the bytes), and reads
at most MAX_FILE bytes of a file: a larger one is listed as skipped, never read in part.
"""

from __future__ import annotations

import enum
import os
import stat
from typing import Iterator, List, Optional, Tuple

from .._record import record
from ..target import project_root

MAX_FILE = 4 * 1024 * 1024  # bytes: generated or minified sources beyond this are skipped


class FileKind(str, enum.Enum):
    PYTHON = "python"
    CPP = "cpp"
    SCRIPT = "script"


_SUFFIXES = {
    ".py": FileKind.PYTHON,
    ".pyw": FileKind.PYTHON,
    **dict.fromkeys(
        (".c", ".cc", ".cpp", ".cxx", ".h", ".hh", ".hpp", ".hxx", ".cu", ".cuh", ".inl"),
        FileKind.CPP,
    ),
    **dict.fromkeys((".sh", ".bash", ".zsh", ".slurm", ".sbatch", ".pbs", ".mk"), FileKind.SCRIPT),
}
_SCRIPT_NAMES = ("dockerfile", "makefile", "containerfile", "gnumakefile")

# Folders that hold other projects' code (installed, vendored, built) or tools' state.
SKIPPED_DIRS = frozenset(
    {
        "node_modules",
        "site-packages",
        "dist-packages",
        "__pycache__",
        "build",
        "dist",
        "third_party",
        "third-party",
        "thirdparty",
        "vendor",
        "vendored",
        "_vendor",
        "external",
        "externals",
    }
)
# A folder holding one of these is an environment, whatever its name.
_ENV_MARKERS = ("pyvenv.cfg", "conda-meta")


@record(frozen=True)
class SourceFile:
    path: str  # as given to the walk joined with the relative path
    relative: str  # relative to the scanned root, "/"-separated: what reports show
    kind: FileKind
    size: int


@record(frozen=True)
class Skipped:
    relative: str
    why: str


def kind_of(name: str) -> Optional[FileKind]:
    lower = name.lower()
    if lower.startswith(_SCRIPT_NAMES):
        return FileKind.SCRIPT
    return _SUFFIXES.get(os.path.splitext(lower)[1])


def walk(root: str) -> Tuple[List[SourceFile], List[Skipped]]:
    """The files to read under ``root`` (a folder, or one file), sorted by relative path,
    and what was left out with why (folders left out whole are listed once)."""
    files: List[SourceFile] = []
    skipped: List[Skipped] = []
    try:
        st = os.stat(root)
    except OSError as exc:
        return files, [Skipped(root, f"cannot read: {exc.strerror or exc}")]
    if stat.S_ISREG(st.st_mode):
        name = os.path.basename(root)
        kind = kind_of(name) or FileKind.PYTHON  # a file named on purpose is read as Python
        _keep(SourceFile(root, name, kind, st.st_size), files, skipped)
        return files, skipped
    for entry, relative in _entries(root, "", skipped):
        found = kind_of(entry.name)
        if found is None:
            continue
        try:
            size = entry.stat(follow_symlinks=False).st_size
        except OSError:
            continue
        _keep(SourceFile(entry.path, relative, found, size), files, skipped)
    files.sort(key=lambda f: f.relative)
    return files, skipped


def _keep(file: SourceFile, files: List[SourceFile], skipped: List[Skipped]) -> None:
    if file.size > MAX_FILE:
        skipped.append(Skipped(file.relative, f"larger than {MAX_FILE // 2**20} MiB"))
    else:
        files.append(file)


def _entries(
    folder: str, prefix: str, skipped: List[Skipped]
) -> Iterator[Tuple[os.DirEntry[str], str]]:
    """Regular files under ``folder``, depth first, links and skipped folders left out."""
    stack = [(folder, prefix)]
    while stack:
        path, rel = stack.pop()
        try:
            with os.scandir(path) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            skipped.append(Skipped(rel or ".", f"cannot list: {exc.strerror or exc}"))
            continue
        for entry in entries:
            relative = f"{rel}/{entry.name}" if rel else entry.name
            try:
                if entry.is_symlink():
                    continue
                if entry.is_dir(follow_symlinks=False):
                    why = _skip_dir(entry)
                    if why is None:
                        stack.append((entry.path, relative))
                    elif why:  # hidden folders (.git, .tox) are left out without a word
                        skipped.append(Skipped(relative + "/", why))
                elif entry.is_file(follow_symlinks=False):
                    yield entry, relative
            except OSError:
                continue


def _skip_dir(entry: os.DirEntry[str]) -> Optional[str]:
    name = entry.name
    if name.startswith("."):
        return None if name in (".github", ".ci", ".circleci") else ""
    if any(os.path.lexists(os.path.join(entry.path, m)) for m in _ENV_MARKERS):
        return "a Python environment"
    if name in SKIPPED_DIRS or name.endswith(".egg-info"):
        return "installed, built or vendored code"
    return None


__all__ = [
    "MAX_FILE",
    "SKIPPED_DIRS",
    "FileKind",
    "Skipped",
    "SourceFile",
    "kind_of",
    "project_root",
    "walk",
]
