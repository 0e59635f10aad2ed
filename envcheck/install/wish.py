"""What the user asks for: ``--torch``, ``--variant``, companions, ``--keep`` and the target,
as one frozen value, with the one parser of each option and the check that it can be
answered at all."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, List, Optional, Sequence, Tuple

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import Version

from .._record import record
from ..compat import torch_version
from ..facts import Facts
from ..tables.model import parse_version
from ..values import Variant
from .manager import Manager
from .releases import known_variants

if TYPE_CHECKING:
    from ..tables import Tables


class WishError(ValueError):
    """A --torch, --variant, --python-version or --platform value that cannot be understood."""


@record(frozen=True)
class Wish:
    torch: str = "latest"  # latest, 2.5, 2.5.1, or a specifier like >=2.4,<2.7
    variant: str = "auto"  # auto, cpu, cuXYZ, rocmX.Y, xpu
    companions: Optional[Tuple[str, ...]] = None  # None: those installed now
    python: Optional[str] = None  # X.Y; None: this machine's
    platform: Optional[str] = None  # None: this machine's
    # Prefer this torch (the installed one): its version and build when they fit, else
    # the release nearest to it that does. `envcheck install --keep`.
    near: Optional[str] = None
    # The package manager the plan is for: with conda, the variants, companions and channels
    # are those of PyTorch's conda channel (tables.conda) up to its last release. Given as a
    # name, held as a Manager (a str: JSON and comparisons see the name).
    manager: str = Manager.PIP

    def __post_init__(self) -> None:
        if self.companions is not None and not isinstance(self.companions, tuple):
            object.__setattr__(self, "companions", tuple(self.companions))
        object.__setattr__(self, "manager", Manager(self.manager))

    @property
    def for_conda(self) -> bool:
        return self.manager == Manager.CONDA

    @property
    def asked_variant(self) -> Optional[Variant]:
        """The variant named by --variant; None for auto."""
        return None if self.variant == "auto" else Variant.parse(self.variant)

    @property
    def may_be_cuda(self) -> bool:
        """Whether the plan may be a CUDA build (auto, or a CUDA variant asked for): then the
        NVIDIA driver and GPUs decide, and what stops every CUDA build stops the plan."""
        asked = self.asked_variant
        return asked is None or asked.is_cuda

    @property
    def cli_args(self) -> List[str]:
        """The `envcheck install` options that make the same plan (for reports and parity)."""
        args = [] if self.torch in ("", "latest") else ["--torch", self.torch]
        if self.near:
            args.append("--keep")
        if self.variant != "auto":
            args += ["--variant", self.variant]
        if self.companions is not None:
            args += ["--with", ",".join(self.companions) or "none"]
        if self.python:
            args += ["--python-version", self.python]
        if self.platform:
            args += ["--platform", self.platform]
        if self.manager != Manager.PIP:
            args += ["--manager", str(self.manager)]
        return args


_PY = re.compile(r"^\d+\.\d+$")


def parse_torch_wish(text: str) -> Tuple[Optional[SpecifierSet], str]:
    """'latest' -> (None, ...), '2.5' -> ==2.5.*, '2.5.1' -> ==2.5.1, or a specifier."""
    text = text.strip()
    if text in ("", "latest"):
        return None, "the newest release"
    if re.fullmatch(r"\d+\.\d+", text):
        return SpecifierSet(f"=={text}.*"), f"torch {text}"
    if re.fullmatch(r"\d+\.\d+\.\d+", text):
        return SpecifierSet(f"=={text}"), f"torch {text}"
    try:
        return SpecifierSet(text), f"torch {text}"
    except InvalidSpecifier:
        raise WishError(
            f"--torch {text!r}: use latest, 2.5, 2.5.1 or a specifier like '>=2.4,<2.7'"
        ) from None


def parse_python(text: Optional[str]) -> Optional[str]:
    """``--python-version``: any version, as X.Y."""
    if text is None:
        return None
    try:
        v = Version(text)
    except ValueError:  # InvalidVersion, or a number of 4300+ digits
        raise WishError(f"--python-version {text!r}: give a Python version like 3.12") from None
    return f"{v.major}.{v.minor}"


def check_wish(
    wish: Wish,
    platforms: Sequence[str],
    tables: Optional[Tables] = None,
) -> None:
    """Raise WishError for a wish no plan can answer: a malformed value, or (with
    ``tables``) a variant that no release of any platform or manager ever had."""
    parse_torch_wish(wish.torch)
    asked = None if wish.variant == "auto" else Variant.maybe(wish.variant)
    if wish.variant != "auto" and asked is None:
        raise WishError(f"--variant {wish.variant!r}: use auto, cpu, cuXYZ (cu128), rocmX.Y or xpu")
    if asked is not None and tables is not None:
        known = known_variants(tables)
        if asked not in known:
            raise WishError(
                f"--variant {wish.variant}: no torch release in the tables was built for it; "
                f"known: {', '.join(str(v) for v in sorted(known))}"
            )
    if wish.python is not None and not _PY.match(wish.python):
        raise WishError(f"--python-version {wish.python!r}: give a Python version like 3.12")
    if wish.platform is not None and wish.platform not in platforms:
        raise WishError(f"--platform {wish.platform!r}: one of {', '.join(platforms)}")
    if wish.near is not None and parse_version(wish.near) is None:
        raise WishError(f"near {wish.near!r} is not a version")


def installed_wish(facts: Facts, torch: str = "latest", **kw: Any) -> Wish:
    """The wish behind a report's install advice: keep the installed torch (version, build,
    companions) where it fits, else change as little as fits. One place, for the core,
    the checks and `envcheck install --torch installed`."""
    version = torch_version(facts)
    return Wish(torch=torch, near=str(version) if version else None, **kw)
