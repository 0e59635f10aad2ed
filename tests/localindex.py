"""A local PEP 503 index of fake wheels, and throwaway venvs to run real pip and uv in.

The wheels are a few hundred bytes each: pure-python ``py3-none-any`` wheels whose
package holds nothing but version files (``torch/version.py`` as real torch writes
it), so pip and uv install, replace and uninstall them exactly as they do the real
ones. Everything runs offline from ``file://`` URLs:

* pip runs with ``PIP_CONFIG_FILE=/dev/null`` (no pip.conf of the machine or the
  user is read), every ``PIP_*`` variable of the caller removed, and an empty local
  index as its default, so a command without ``--index-url`` finds nothing rather
  than reaching out to a real index;
* uv runs with ``UV_NO_CONFIG=1``, ``UV_OFFLINE=1``, every ``UV_*`` variable of the
  caller removed and a cache folder of its own.

``uv pip install --torch-backend=<variant>`` cannot be pointed at a local index:
uv hard-codes the PyTorch index URLs for its backends and (as of uv 0.13.9) reads
no setting or variable that replaces them; ``--index-url`` and friends are ignored
for torch-family packages once a backend is set. :func:`localize` therefore
refuses such commands (:class:`TorchBackendNotLocal`) instead of silently running
something else.
"""

from __future__ import annotations

import atexit
import base64
import csv
import hashlib
import html
import io
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union
from urllib.parse import quote

from envcheck.compat import INDEX_URL as PYTORCH_INDEX

_EPOCH = (2020, 1, 1, 0, 0, 0)  # fixed zip timestamps: the same wheel has the same hash
_TORCH_FAMILY = ("torch", "torchvision", "torchaudio")


# --------------------------------------------------------------------------- names


def normalize(name: str) -> str:
    """PEP 503 project name: ``Foo.Bar_baz`` -> ``foo-bar-baz``."""
    return re.sub(r"[-_.]+", "-", name).lower()


def _escape(name: str) -> str:
    """The distribution part of a wheel file or ``.dist-info`` name."""
    return re.sub(r"[-_.]+", "_", name).lower()


def local_label(version: str) -> Optional[str]:
    """``2.13.0+cu126`` -> ``cu126``; None without a label."""
    return version.partition("+")[2] or None


def cuda_of_label(label: Optional[str]) -> Optional[str]:
    """``cu126`` -> ``12.6``, ``cu118`` -> ``11.8``, ``cu92`` -> ``9.2``; None for the rest."""
    m = re.fullmatch(r"cu(\d+)(\d)", label or "")
    return f"{int(m.group(1))}.{m.group(2)}" if m else None


def hip_of_label(label: Optional[str]) -> Optional[str]:
    """``rocm6.2`` -> ``6.2``; None for the rest."""
    m = re.fullmatch(r"rocm([\d.]+)", label or "")
    return m.group(1) if m else None


# --------------------------------------------------------------------------- wheels

_UNSET = object()


def _version_py(version: str, cuda: Optional[str], hip: Optional[str]) -> str:
    """``torch/version.py`` in the layout torch 2.x writes."""
    return (
        "from typing import Optional\n\n"
        "__all__ = ['__version__', 'debug', 'cuda', 'git_version', 'hip', 'rocm', 'xpu']\n"
        f"__version__ = {version!r}\n"
        "debug = False\n"
        f"cuda: Optional[str] = {cuda!r}\n"
        "git_version = '0123456789abcdef0123456789abcdef01234567'\n"
        f"hip: Optional[str] = {hip!r}\n"
        f"rocm: Optional[str] = {hip!r}\n"
        "xpu: Optional[str] = None\n"
    )


def _record_hash(data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
    return "sha256=" + digest.decode("ascii")


def wheel_filename(name: str, version: str) -> str:
    """``torch-2.13.0+cu126-py3-none-any.whl``: the local label keeps its ``+``, as in
    PyTorch's own wheel names."""
    return f"{_escape(name)}-{version}-py3-none-any.whl"


def make_wheel(
    dest_dir: Union[str, Path],
    name: str,
    version: str,
    files: Optional[Mapping[str, Union[str, bytes]]] = None,
    requires: Iterable[str] = (),
    *,
    cuda: object = _UNSET,
    hip: object = _UNSET,
) -> Path:
    """Write a pure-python wheel of ``name`` ``version`` into ``dest_dir``; return its path.

    The package (``name`` with dashes as underscores) gets an ``__init__.py`` with
    ``__version__``; torch, torchvision and torchaudio also get a ``version.py`` with
    ``__version__``, ``cuda``, ``hip`` as torch writes it. ``cuda`` and ``hip`` default
    to what the local label says (``+cu126`` -> ``"12.6"``, ``+rocm6.2`` -> ``"6.2"``,
    ``+cpu`` or no label -> None); pass ``cuda="12.8"`` for an unlabelled CUDA build
    as PyPI serves it. ``files`` (path inside the wheel -> text or bytes) adds files
    or replaces the generated ones. ``requires`` become ``Requires-Dist`` lines.
    """
    dest = Path(dest_dir)
    dest.mkdir(parents=True, exist_ok=True)
    label = local_label(version)
    cuda_v = cuda_of_label(label) if cuda is _UNSET else cuda
    hip_v = hip_of_label(label) if hip is _UNSET else hip
    pkg = name.replace("-", "_").replace(".", "_").lower()

    content: Dict[str, bytes] = {f"{pkg}/__init__.py": f"__version__ = {version!r}\n".encode()}
    if normalize(name) in _TORCH_FAMILY:
        content[f"{pkg}/version.py"] = _version_py(version, cuda_v, hip_v).encode()
    for path, data in (files or {}).items():
        content[path] = data.encode() if isinstance(data, str) else data

    dist_info = f"{_escape(name)}-{version}.dist-info"
    metadata = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}"]
    metadata += [f"Requires-Dist: {r}" for r in requires]
    content[f"{dist_info}/METADATA"] = ("\n".join(metadata) + "\n").encode()
    content[f"{dist_info}/WHEEL"] = (
        b"Wheel-Version: 1.0\n"
        b"Generator: envcheck-tests (localindex)\n"
        b"Root-Is-Purelib: true\n"
        b"Tag: py3-none-any\n"
    )
    content[f"{dist_info}/top_level.txt"] = f"{pkg}\n".encode()

    record = io.StringIO()
    writer = csv.writer(record, lineterminator="\n")
    for path, data in content.items():
        writer.writerow([path, _record_hash(data), str(len(data))])
    writer.writerow([f"{dist_info}/RECORD", "", ""])
    content[f"{dist_info}/RECORD"] = record.getvalue().encode()

    out = dest / wheel_filename(name, version)
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        for path, data in content.items():
            info = zipfile.ZipInfo(path, date_time=_EPOCH)
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, data)
    return out


# --------------------------------------------------------------------------- indexes


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _page(title: str, links: Sequence[Tuple[str, str]]) -> str:
    body = "\n".join(
        f'    <a href="{html.escape(href)}">{html.escape(text)}</a><br/>' for href, text in links
    )
    return (
        "<!DOCTYPE html>\n<html>\n  <head>\n"
        '    <meta name="pypi:repository-version" content="1.0">\n'
        f"    <title>{html.escape(title)}</title>\n  </head>\n  <body>\n"
        f"    <h1>{html.escape(title)}</h1>\n{body}\n  </body>\n</html>\n"
    )


def build_index(root: Union[str, Path], wheels: Mapping[str, Sequence[Path]]) -> str:
    """A PEP 503 simple index under ``root/simple``; return its ``file://`` URL.

    ``wheels`` maps a project name to its wheel files. Each project gets
    ``root/simple/<normalized-name>/index.html`` with the wheels copied next to it
    and linked by relative URLs with ``#sha256=`` fragments (the ``+`` of a local
    label written ``%2B``, as PyTorch's index does); ``root/simple/index.html`` lists
    the projects. An empty mapping makes an empty index. For PyTorch's layout of one
    index per variant, call it once per variant: ``build_index(root / "cu126", ...)``
    (or use :func:`build_indexes`).
    """
    simple = Path(root) / "simple"
    simple.mkdir(parents=True, exist_ok=True)
    projects = sorted({normalize(n) for n in wheels})
    for project in projects:
        folder = simple / project
        folder.mkdir(exist_ok=True)
        links = []
        files = [Path(w) for n, ws in wheels.items() if normalize(n) == project for w in ws]
        for wheel in sorted(files, key=lambda p: p.name):
            target = folder / wheel.name
            if wheel.resolve() != target.resolve():
                shutil.copyfile(wheel, target)
            links.append((f"{quote(wheel.name)}#sha256={_sha256(target)}", wheel.name))
        (folder / "index.html").write_text(_page(f"Links for {project}", links))
    (simple / "index.html").write_text(_page("Simple index", [(f"{p}/", p) for p in projects]))
    return simple.resolve().as_uri()


def build_indexes(
    root: Union[str, Path], indexes: Mapping[str, Mapping[str, Sequence[Path]]]
) -> Dict[str, str]:
    """Several indexes side by side: ``{"cpu": {...}, "cu126": {...}, "default": {...}}``
    -> ``root/<key>/simple`` each; return key -> ``file://`` URL."""
    return {key: build_index(Path(root) / key, wheels) for key, wheels in indexes.items()}


@dataclass
class TorchFamily:
    """The versions of one release line, for :func:`torch_indexes`."""

    torch: str = "2.13.0"
    torchvision: Optional[str] = "0.28.0"
    torchaudio: Optional[str] = None
    default_cuda: Optional[str] = "12.8"  # what the unlabelled torch on the default index is


def torch_indexes(
    root: Union[str, Path],
    variants: Sequence[str] = ("cpu", "cu126"),
    releases: Sequence[TorchFamily] = (TorchFamily(),),
    default: bool = True,
) -> Dict[str, str]:
    """PyTorch's layout in miniature: one index per variant, where every wheel carries
    the variant's local label (``torch 2.13.0+cu126``), and with ``default`` a
    ``"default"`` index as PyPI serves torch: unlabelled versions, a CUDA build
    (``cuda = default_cuda`` in ``torch/version.py``). Companions depend on
    ``torch==<version>`` without a label, as the real torchvision and torchaudio
    wheels do. Return variant (and ``"default"``) -> ``file://`` URL."""
    root = Path(root)
    wheel_dir = root / "_wheels"
    layout: Dict[str, Dict[str, List[Path]]] = {}
    labels: List[Tuple[str, Optional[str]]] = [(v, v) for v in variants]
    if default:
        labels.append(("default", None))
    for key, label in labels:
        projects: Dict[str, List[Path]] = layout.setdefault(key, {})
        for rel in releases:

            def ver(v: str, label: Optional[str] = label) -> str:
                return f"{v}+{label}" if label else v

            extra = {} if label else {"cuda": rel.default_cuda}
            projects.setdefault("torch", []).append(
                make_wheel(wheel_dir / key, "torch", ver(rel.torch), **extra)
            )
            for comp in ("torchvision", "torchaudio"):
                cv = getattr(rel, comp)
                if cv:
                    projects.setdefault(comp, []).append(
                        make_wheel(
                            wheel_dir / key,
                            comp,
                            ver(cv),
                            requires=[f"torch=={rel.torch}"],
                            **extra,
                        )
                    )
    return build_indexes(root, layout)


# --------------------------------------------------------------------------- commands


class TorchBackendNotLocal(ValueError):
    """``--torch-backend``: uv fetches from PyTorch's real index, which cannot be redirected."""


_INDEX_FLAGS = ("--index-url", "-i", "--extra-index-url", "--index", "--default-index")


def _local_url(url: str, url_map: Mapping[str, str]) -> str:
    if url.startswith("file:"):
        return url
    if url in url_map:  # another index than PyTorch's, named whole (NVIDIA's Jetson index)
        return url_map[url]
    base = PYTORCH_INDEX.rstrip("/") + "/"
    if url.rstrip("/").startswith(base.rstrip("/")):
        variant = url.rstrip("/")[len(base) :]
        if not variant or variant not in url_map:
            raise KeyError(
                f"no local index for variant {variant!r} (from {url}); have {sorted(url_map)}"
            )
        return url_map[variant]
    raise ValueError(f"not a PyTorch index URL, and no local copy of it: {url}")


def localize(
    argv: Union[str, Sequence[str]],
    url_map: Mapping[str, str],
    default: Optional[str] = None,
) -> List[str]:
    """Rewrite a rendered install command to local indexes.

    ``argv`` is the command as a string (split like a POSIX shell) or a list. Every
    PyTorch index URL after ``--index-url``/``-i``/``--extra-index-url`` (and uv's
    ``--index``/``--default-index``), in either the ``--flag URL`` or ``--flag=URL``
    spelling, becomes ``url_map[<variant>]``. Any other ``http(s)`` index URL raises
    ValueError, a variant missing from ``url_map`` KeyError: nothing is left that
    would reach out to the network. With ``default``, a command that names no
    ``--index-url`` gets ``--index-url default`` (the local stand-in for PyPI).
    ``--torch-backend`` raises :class:`TorchBackendNotLocal`: uv reads PyTorch's
    real index for it and offers no way to point it elsewhere.
    """
    args = shlex.split(argv) if isinstance(argv, str) else list(argv)
    out: List[str] = []
    has_default = False
    i = 0
    while i < len(args):
        arg = args[i]
        flag, eq, value = arg.partition("=")
        if flag == "--torch-backend" or arg == "--torch-backend":
            raise TorchBackendNotLocal(
                f"{arg!r}: uv fetches torch-family packages from PyTorch's own index for a "
                "backend and offers no setting to redirect it to a local index"
            )
        if flag in _INDEX_FLAGS and eq:
            has_default |= flag in ("--index-url", "--default-index")
            out.append(f"{flag}={_local_url(value, url_map)}")
        elif arg in _INDEX_FLAGS and i + 1 < len(args):
            has_default |= arg in ("--index-url", "-i", "--default-index")
            out += [arg, _local_url(args[i + 1], url_map)]
            i += 1
        elif arg.startswith("-i") and len(arg) > 2:  # -iURL
            has_default = True
            out.append("-i" + _local_url(arg[2:], url_map))
        else:
            out.append(arg)
        i += 1
    if default is not None and not has_default:
        out += ["--index-url", default]
    return out


def split_installer(argv: Sequence[str]) -> Tuple[str, List[str]]:
    """``pip install X`` / ``python -m pip install X`` / ``uv pip install [--python P] X`` ->
    (``"pip"`` or ``"uv"``, ``["install", "X"]``): the command's own interpreter is dropped,
    as the :class:`Venv` that runs it names its own."""
    args = list(argv)
    if args[:2] == ["uv", "pip"]:
        rest = args[2:]
        if "--python" in rest:  # the interpreter is the Venv's that runs it (Venv.uv adds it)
            at = rest.index("--python")
            del rest[at : at + 2]
        return "uv", rest
    if args[:1] in (["pip"], ["pip3"]):
        return "pip", args[1:]
    if len(args) >= 3 and args[1:3] == ["-m", "pip"]:
        return "pip", args[3:]
    raise ValueError(f"not a pip or uv pip command: {shlex.join(args)}")


# --------------------------------------------------------------------------- venvs


def uv_bin() -> str:
    """The uv next to this interpreter, else the uv package's, else the one on PATH."""
    here = Path(sys.executable).parent / ("uv.exe" if os.name == "nt" else "uv")
    if here.exists():
        return str(here)
    try:
        from uv import find_uv_bin  # type: ignore[import-not-found]

        return find_uv_bin()
    except ImportError:
        found = shutil.which("uv")
        if not found:
            raise FileNotFoundError("uv is not installed") from None
        return found


def _bundled_pip() -> Optional[Path]:
    """The pip wheel that ships with this Python's ensurepip (absent on some distros)."""
    try:
        import ensurepip
    except ImportError:
        return None
    found = sorted((Path(ensurepip.__file__).parent / "_bundled").glob("pip-*.whl"))
    return found[-1] if found else None


def _base_env() -> Dict[str, str]:
    """The caller's environment without anything that steers pip, uv or Python."""
    drop = ("PIP_", "UV_", "PYTHON", "CONDA_", "PYX_")
    env = {k: v for k, v in os.environ.items() if not k.upper().startswith(drop)}
    for k in ("VIRTUAL_ENV", "SSL_CERT_FILE", "REQUESTS_CA_BUNDLE"):
        env.pop(k, None)
    env["PYTHONNOUSERSITE"] = "1"
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


_scratch: Optional[Path] = None


def _scratch_dir() -> Path:
    """One empty index and one uv cache per test process."""
    global _scratch
    if _scratch is None:
        _scratch = Path(tempfile.mkdtemp(prefix="envcheck-localindex-"))
        atexit.register(shutil.rmtree, _scratch, ignore_errors=True)
    return _scratch


def empty_index() -> str:
    """A local index with no projects: the default for commands that name none."""
    folder = _scratch_dir() / "empty"
    if not (folder / "simple" / "index.html").exists():
        return build_index(folder, {})
    return (folder / "simple").resolve().as_uri()


@dataclass
class Venv:
    """A throwaway virtual environment with pip, driven by real pip and real uv."""

    path: Path
    uv_cache: Optional[Path] = None  # default: one cache folder per test process
    last: Optional[subprocess.CompletedProcess] = field(default=None, repr=False)

    @property
    def python(self) -> Path:
        return self.path / ("Scripts/python.exe" if os.name == "nt" else "bin/python")

    @classmethod
    def create(cls, path: Union[str, Path], pip: bool = True) -> Venv:
        """``uv venv`` (fast), then pip from ensurepip's bundled wheel installed by uv
        (offline); where this Python ships no pip wheel, ``python -m venv``."""
        path = Path(path)
        venv = cls(path)
        wheel = _bundled_pip() if pip else None
        if pip and wheel is None:
            subprocess.run([sys.executable, "-m", "venv", str(path)], check=True, env=_base_env())
            return venv
        venv._uv_run(["venv", "--quiet", "--python", sys.executable, str(path)])
        if wheel is not None:
            venv.uv("install", "--quiet", "--no-index", "--compile-bytecode", str(wheel))
        return venv

    def clone(self, path: Union[str, Path]) -> Venv:
        """A copy of this venv at ``path``. ``python -m pip`` and ``uv pip --python``
        work in it; the console scripts in bin/ still point at the original.

        pip's own files are hard-linked rather than copied (fast; pip and uv replace
        files by unlinking, never by writing into them); everything else is copied."""
        pip_dir = os.sep + "pip" + os.sep

        def link_or_copy(src: str, dst: str) -> None:
            if pip_dir in src:
                try:
                    os.link(src, dst)
                    return
                except OSError:
                    pass
            shutil.copy2(src, dst)

        shutil.copytree(self.path, path, symlinks=True, copy_function=link_or_copy)
        return Venv(Path(path), self.uv_cache)

    # -- running

    def pip_env(self) -> Dict[str, str]:
        env = _base_env()
        env.update(
            PIP_CONFIG_FILE=os.devnull,  # pip then reads no config file at all
            PIP_DISABLE_PIP_VERSION_CHECK="1",
            PIP_NO_INPUT="1",
            PIP_CONSTRAINT="",
            PIP_INDEX_URL=empty_index(),  # --index-url on the command line wins
            PIP_NO_CACHE_DIR="1",
            PIP_RETRIES="0",
            PIP_KEYRING_PROVIDER="disabled",
        )
        return env

    def uv_env(self) -> Dict[str, str]:
        env = _base_env()
        cache = self.uv_cache or (_scratch_dir() / "uv-cache")
        env.update(
            UV_NO_CONFIG="1",
            UV_OFFLINE="1",
            UV_CACHE_DIR=str(cache),
            UV_PYTHON_DOWNLOADS="never",
            UV_NO_PROGRESS="1",
            UV_LINK_MODE="copy",
            UV_KEYRING_PROVIDER="disabled",
        )
        return env

    def _cwd(self) -> Path:
        if self.path.is_dir():
            return self.path
        self.path.parent.mkdir(parents=True, exist_ok=True)
        return self.path.parent

    def _run(self, cmd: List[str], env: Dict[str, str], check: bool) -> subprocess.CompletedProcess:
        # cwd: the venv, so a checkout's *.egg-info in the caller's folder is not seen
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=self._cwd())
        self.last = proc
        if check and proc.returncode != 0:
            raise AssertionError(
                f"exit {proc.returncode}: {shlex.join(cmd)}\n--- stdout\n{proc.stdout}\n--- stderr\n{proc.stderr}"
            )
        return proc

    def _uv_run(self, args: List[str], check: bool = True) -> subprocess.CompletedProcess:
        return self._run([uv_bin(), *args], self.uv_env(), check)

    def pip(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        """``<venv>/bin/python -m pip ARGS`` with an isolated configuration."""
        return self._run([str(self.python), "-I", "-m", "pip", *args], self.pip_env(), check)

    def uv(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        """``uv pip ARGS --python <venv python>``, isolated and offline; ``args`` start
        with the subcommand: ``venv.uv("install", "torch==2.13.0", "--index-url", url)``."""
        if not args:
            raise ValueError("uv pip needs a subcommand")
        return self._uv_run(["pip", args[0], "--python", str(self.python), *args[1:]], check)

    def run_command(
        self,
        argv: Union[str, Sequence[str]],
        url_map: Mapping[str, str],
        default: Optional[str] = None,
        check: bool = True,
    ) -> subprocess.CompletedProcess:
        """Run a rendered ``pip install ...`` / ``uv pip install ...`` command here,
        with its PyTorch index URLs made local (:func:`localize`)."""
        tool, args = split_installer(localize(argv, url_map, default))
        return self.pip(*args, check=check) if tool == "pip" else self.uv(*args, check=check)

    def python_run(self, code: str) -> str:
        """Run ``code`` in the venv's python; return its stdout."""
        env = _base_env()
        return self._run([str(self.python), "-I", "-c", code], env, check=True).stdout

    # -- looking

    def installed(self) -> Dict[str, str]:
        """Normalized name -> version (local label included) of every distribution in
        the venv, as ``importlib.metadata`` inside it sees them."""
        code = (
            "import importlib.metadata as m, json, re\n"
            "print(json.dumps({re.sub(r'[-_.]+', '-', d.metadata['Name']).lower(): d.version"
            " for d in m.distributions()}))"
        )
        return json.loads(self.python_run(code))

    def module_version(self, module: str = "torch.version") -> Dict[str, Optional[str]]:
        """``__version__``, ``cuda`` and ``hip`` of ``module`` as imported in the venv:
        what the files on disk say, not just the metadata."""
        code = (
            f"import json, importlib; v = importlib.import_module({module!r})\n"
            "print(json.dumps({k: getattr(v, k, None) for k in ('__version__', 'cuda', 'hip')}))"
        )
        return json.loads(self.python_run(code))

    def installer_of(self, name: str) -> Optional[str]:
        """What the dist-info's INSTALLER says (``pip``, ``uv``)."""
        code = (
            "import importlib.metadata as m\n"
            f"t = m.distribution({name!r}).read_text('INSTALLER')\n"
            "print((t or '').strip())"
        )
        return self.python_run(code).strip() or None
