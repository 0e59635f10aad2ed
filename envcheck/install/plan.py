"""What the resolver answers: a frozen ``Planned`` (what to install, and why) or a frozen
``NoPlan`` (what conflicts, its ``Blocker``, the nearest ways out). One of the two, never a
plan with an ``ok`` flag beside fields that may or may not be set.

Both answer the attributes every reader of a plan asks (``ok``, ``torch``, ``conflicts``,
``ways_out``, ...), the other kind's as empty, and both serialise to the same flat record
(``PlanRecord``), the ``install --json`` document and the report's ``install.plan``.

A plan that keeps a version but changes its build (``2.13.0+cpu`` to the cu126 build) pins
the local label (``torch==2.13.0+cu126``): pip and uv treat a plain ``torch==2.13.0`` as
satisfied by the installed ``2.13.0+cpu`` and change nothing.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple, Union

from .._record import field, record
from ..compat import INDEX_URL
from ..values import Platform, Variant
from .reasons import Blocker
from .wish import Wish
from .wish import parse_python as parse_python  # cli.py imports it from here


@record(frozen=True)
class Package:
    name: str
    version: str
    # The local label to pin (``cu126`` -> ``torch==2.13.0+cu126``): set when the
    # installed copy has this version in another build, which a public pin leaves alone.
    local: Optional[str] = None

    @property
    def pin(self) -> str:
        return f"{self.name}=={self.version}" + (f"+{self.local}" if self.local else "")


@record(frozen=True)
class CondaCommand:
    """What a ``conda install`` from PyTorch's own channel needs besides the pins."""

    channels: Tuple[str, ...]  # in order: ("pytorch", "nvidia")
    package: Optional[str] = (
        None  # the build selector: cudatoolkit=11.3, pytorch-cuda=12.1, cpuonly
    )


@record(frozen=True)
class OtherIndex:
    """An index that is not PyTorch's, whose builds the plan installs (NVIDIA's Jetson index):
    its whole URL, and whose builds they are, in words."""

    url: str
    builds: str  # "NVIDIA's JetPack 6.1-6.2.1 build"


# The flat record both kinds of plan serialise to (``to_dict``), field by field in the order
# of the published JSON (docs/schema): its field types are the JSON Schema of a plan.
@record(frozen=True)
class PlanRecord:
    ok: bool
    platform: Optional[str]
    python: Optional[str]
    torch: Optional[str]
    variant: Optional[str]
    default_index: bool
    packages: List[Package]
    reasons: List[str]
    notes: List[str]
    conflicts: List[str]
    ways_out: List[str]
    changes: List[str]
    replaces_build: bool
    index_base: Optional[str]
    other_index: Optional[OtherIndex]
    unverified: List[str]
    blocker: Optional[str]
    passed_over: List[Tuple[str, str]]
    wish: Wish
    conda: Optional[CondaCommand]
    interpreter: Optional[str]
    externally_managed: bool


@record(frozen=True)
class _Common:
    """What every answer says: the target, the wish, and the interpreter it installs into."""

    platform: Optional[str]
    python: Optional[str]
    wish: Wish = field(default_factory=Wish)
    notes: Tuple[str, ...] = ()  # companions left out, PTX-only GPUs, ...
    # Facts the plan depends on that the tables do not hold ("kernels for sm_120 in
    # 2.5.1+cu124: the arch list of that build is not known"): said, never assumed.
    unverified: Tuple[str, ...] = ()
    passed_over: Tuple[Tuple[str, str], ...] = ()  # (torch, why not), tried first
    # The interpreter the commands must name (`PATH -m pip`, `uv pip install --python PATH`):
    # set when the plan is for the described interpreter and a bare `pip` would not reach it.
    interpreter: Optional[str] = None
    # That interpreter is externally managed (PEP 668): pip refuses it, so the commands make
    # a virtual environment first.
    externally_managed: bool = False

    def _record(self, **kind: Any) -> Dict[str, Any]:
        record = PlanRecord(
            platform=self.platform,
            python=self.python,
            notes=list(self.notes),
            unverified=list(self.unverified),
            passed_over=list(self.passed_over),
            wish=self.wish,
            interpreter=self.interpreter,
            externally_managed=self.externally_managed,
            **kind,
        )
        from dataclasses import asdict  # only a plan written out pays for dataclasses

        return asdict(record)


@record(frozen=True)
class Planned(_Common):
    """A build that fits: torch, its variant and companions, with the reasons."""

    torch: str = ""
    variant: Variant = field(default_factory=lambda: Variant("cpu"))  # always given by Draft
    packages: Tuple[Package, ...] = ()
    reasons: Tuple[str, ...] = ()  # why this choice, one or two lines
    changes: Tuple[str, ...] = ()  # what changes against the installed torch
    default_index: bool = False  # the default index (PyPI) serves this variant
    replaces_build: bool = False  # same version, another build: the pins carry local labels
    # PyTorch's index for this version when it is not the usual one (the 1.8 LTS builds:
    # https://download.pytorch.org/whl/lts/1.8/); the variant is appended.
    index_base: Optional[str] = None
    other_index: Optional[OtherIndex] = None  # builds from another index than PyTorch's
    # Set when the plan is for PyTorch's conda channel (Wish.manager conda, torch <= its last).
    conda: Optional[CondaCommand] = None

    @property
    def ok(self) -> bool:
        return True

    @property
    def conflicts(self) -> Tuple[str, ...]:
        return ()

    @property
    def ways_out(self) -> Tuple[str, ...]:
        return ()

    @property
    def blocker(self) -> Optional[Blocker]:
        return None

    @property
    def installs(self) -> str:
        """The torch the command installs, as its version names it: ``2.15.0+cu128`` from
        PyTorch's index (and a pinned local label); the plain version where the default index
        serves it without one: macOS's one wheel (``2.15.0``), PyPI's default CUDA build up to
        2.0 (``2.0.1 (cu117 on the default index)``)."""
        if self.other_index is not None:
            return f"{self.torch} ({self.other_index.builds}, {self.variant})"
        labelled = any(p.local for p in self.packages if p.name == "torch")
        if self.default_index and not labelled:
            macos = self.platform is not None and Platform.parse(self.platform).is_macos
            return self.torch if macos else f"{self.torch} ({self.variant} on the default index)"
        return f"{self.torch}+{self.variant}"

    @property
    def index_url(self) -> Optional[str]:
        if self.other_index is not None:
            return self.other_index.url
        if self.default_index:
            return None
        return (self.index_base or INDEX_URL) + str(self.variant)

    def to_dict(self) -> Dict[str, Any]:
        out = self._record(
            ok=True,
            torch=self.torch,
            variant=str(self.variant),
            default_index=self.default_index,
            packages=list(self.packages),
            reasons=list(self.reasons),
            conflicts=[],
            ways_out=[],
            changes=list(self.changes),
            replaces_build=self.replaces_build,
            index_base=self.index_base,
            other_index=self.other_index,
            blocker=None,
            conda=self.conda,
        )
        if out["conda"] is not None:
            out["conda"]["channels"] = list(out["conda"]["channels"])
        out["index_url"] = self.index_url
        return out


@record(frozen=True)
class NoPlan(_Common):
    """No build fits: what conflicts, why as a value, and the nearest ways out."""

    blocker: Blocker = Blocker.UNKNOWN
    conflicts: Tuple[str, ...] = ()
    ways_out: Tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return False

    @property
    def torch(self) -> Optional[str]:
        return None

    @property
    def variant(self) -> Optional[Variant]:
        return None

    @property
    def packages(self) -> Tuple[Package, ...]:
        return ()

    @property
    def reasons(self) -> Tuple[str, ...]:
        return ()

    @property
    def changes(self) -> Tuple[str, ...]:
        return ()

    @property
    def default_index(self) -> bool:
        return False

    @property
    def replaces_build(self) -> bool:
        return False

    @property
    def index_base(self) -> Optional[str]:
        return None

    @property
    def other_index(self) -> Optional[OtherIndex]:
        return None

    @property
    def conda(self) -> Optional[CondaCommand]:
        return None

    @property
    def installs(self) -> str:
        return ""

    @property
    def index_url(self) -> Optional[str]:
        return None

    def to_dict(self) -> Dict[str, Any]:
        out = self._record(
            ok=False,
            torch=None,
            variant=None,
            default_index=False,
            packages=[],
            reasons=[],
            conflicts=list(self.conflicts),
            ways_out=list(self.ways_out),
            changes=[],
            replaces_build=False,
            index_base=None,
            other_index=None,
            blocker=self.blocker.value,
            conda=None,
        )
        out["index_url"] = None
        return out


# What ``resolve`` answers, and what a report's install advice carries.
InstallPlan = Union[Planned, NoPlan]
