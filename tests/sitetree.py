"""Build fake site-packages trees of real files, as the installers lay them out."""

from __future__ import annotations

from pathlib import Path
from typing import Optional


def add_dist(site: Path, name: str, version: str, installer: Optional[str] = "pip") -> Path:
    """A ``NAME-VERSION.dist-info`` folder with METADATA and INSTALLER, as pip writes it."""
    folder = site / f"{name.replace('-', '_')}-{version}.dist-info"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    if installer is not None:
        (folder / "INSTALLER").write_text(installer + "\n")
    return folder


def add_torch(
    site: Path,
    version: str,
    cuda: Optional[str] = None,
    hip: Optional[str] = None,
    git: str = "0123456789abcdef0123456789abcdef01234567",
    dist: bool = True,
    installer: str = "pip",
    old_style: bool = False,
) -> Path:
    """A torch package with its generated version.py (new or old style) and dist-info."""
    pkg = site / "torch"
    pkg.mkdir(parents=True, exist_ok=True)
    (pkg / "__init__.py").write_text("raise RuntimeError('the static probe must not import me')\n")
    if old_style:  # torch 1.x wrote plain assignments, no annotations
        text = f"__version__ = '{version}'\ndebug = False\ncuda = {cuda!r}\ngit_version = '{git}'\n"
        text += f"hip = {hip!r}\n"
    else:
        text = (
            "from typing import Optional\n\n"
            "__all__ = ['__version__', 'debug', 'cuda', 'git_version', 'hip', 'xpu']\n"
            f"__version__ = '{version}'\n"
            "debug = False\n"
            f"cuda: Optional[str] = {cuda!r}\n"
            f"git_version = '{git}'\n"
            f"hip: Optional[str] = {hip!r}\n"
            "xpu: Optional[str] = None\n"
        )
    (pkg / "version.py").write_text(text)
    if dist:
        add_dist(site, "torch", version, installer)
    return pkg
