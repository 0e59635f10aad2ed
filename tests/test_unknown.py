"""Unknown is said, never read as "fits": install plans and checks where the tables lack
a build's architecture list.

On the frozen fixture tables (tests/fixture_tables) the arch lists of torch 1.8-2.6 are
absent, as they were in the shipped tables before they were researched: these tests
keep the logic honest whatever the shipped data holds.
"""

from __future__ import annotations

from envcheck.facts import Facts, GpuFacts, TorchFacts
from envcheck.install import Wish, resolve
from envcheck.install.reasons import Blocker
from envcheck.values import ComputeCapability, Severity, Variant
from tests.fixtures import TABLES, finding, profile, report_of

RTX5090 = GpuFacts(
    index=0, name="NVIDIA GeForce RTX 5090", compute_capability=ComputeCapability.parse("12.0")
)
RTX4090 = GpuFacts(
    index=0, name="NVIDIA GeForce RTX 4090", compute_capability=ComputeCapability.parse("8.9")
)


def _box(gpu: GpuFacts, torch: str = "", cuda: str = "") -> Facts:
    facts = profile("docker-small-shm")  # Linux x86_64
    facts.python.version = "3.11.7"
    facts.nvidia.gpus = [gpu]
    facts.nvidia.driver_version = "570.86.10"
    facts.nvidia.cuda_driver_version = "12.8"
    facts.nvidia.device_nodes = ["/dev/nvidia0"]
    facts.torch = TorchFacts(
        installed=bool(torch),
        version=torch or None,
        dist_version=torch or None,
        cuda=cuda or None,
        location="/x/site-packages/torch" if torch else None,
        installer="pip" if torch else None,
    )
    return facts


def test_the_fixture_tables_lack_the_lists_these_tests_need() -> None:
    release = next(r for r in TABLES.releases if r.minor == "2.5")
    assert release.arch_list(Variant.parse("cu124"), "x86_64") is None


def test_a_missing_arch_list_is_not_coverage() -> None:
    """The issue's case: no 2.5 build has sm_120 kernels, and nothing said it had."""
    plan = resolve(_box(RTX5090), TABLES, Wish(torch="2.5"), "linux-x86_64")
    assert plan.ok is False and plan.blocker is Blocker.UNKNOWN, plan  # never a fit
    assert not any("covered by" in r for r in (*plan.conflicts, *plan.ways_out))
    assert plan.conflicts == (
        "no build is known to have kernels for the GPUs here: kernels for NVIDIA GeForce RTX "
        "5090 (sm_120) in torch 2.5.1+cu124: the tables do not hold this build's architecture "
        "list",
    )
    assert plan.to_dict()["ways_out"][0].startswith("torch 2.5.1+cu124 may have them")


def test_a_build_known_to_fit_comes_before_one_that_may() -> None:
    """Near 2.6 (no lists) the resolver looks at 2.6 first, then 2.7, whose cu128 list is
    known to cover sm_120: it takes 2.7 and says why it passed 2.6 over."""
    plan = resolve(_box(RTX5090), TABLES, Wish(torch=">=2.6,<2.8", near="2.6.0"), "linux-x86_64")
    assert plan.ok and (plan.torch, plan.variant) == ("2.7.1", "cu128")
    assert list(plan.unverified) == []
    assert any(n.startswith("passed over torch 2.6.0, not known to fit") for n in plan.notes)


def test_an_explicit_variant_with_an_unknown_list_is_not_verified() -> None:
    plan = resolve(_box(RTX4090), TABLES, Wish(torch="2.5", variant="cu121"), "linux-x86_64")
    assert plan.ok and plan.variant == "cu121"
    assert plan.unverified and "sm_89" in plan.unverified[0]


def test_a_known_list_needs_no_caveat() -> None:
    plan = resolve(_box(RTX4090), TABLES, Wish(torch="2.13"), "linux-x86_64")
    assert plan.ok and list(plan.unverified) == []


def test_check_warns_when_the_installed_builds_coverage_is_unknown() -> None:
    """2.5.1+cu124 with an RTX 5090, no deep probe: not a silent READY."""
    facts = _box(RTX5090, torch="2.5.1+cu124", cuda="12.4")
    report = report_of(facts)
    unknown = finding(report, "ARC004")
    assert unknown is not None and unknown.severity is Severity.WARNING
    assert report_of(facts, strict=True).verdict.value == "not ready"


def test_a_ready_verdict_beside_an_unknown_says_not_verified() -> None:
    """With a CUDA torch whose list the tables lack on a GPU the driver runs, the verdict line
    says READY (NOT VERIFIED: ARC004) and the JSON lists it; a known build says plain READY."""
    from envcheck.facts import TorchRuntimeFacts
    from envcheck.report.findings_text import render_text, report_dict

    def h100(torch: str, cuda: str) -> Facts:
        facts = profile("h100-server")  # driver 550: runs CUDA 12.x
        facts.torch.version = facts.torch.dist_version = torch
        facts.torch.cuda = cuda
        facts.torch.companions = []
        facts.torch_runtime = TorchRuntimeFacts(status="skipped")  # --no-deep
        return facts

    unknown = report_of(h100("2.5.1+cu124", "12.4"))  # the fixture tables hold no 2.5 lists
    known = report_of(h100("2.13.0+cu126", "12.6"))
    for report, unverified in ((unknown, ["ARC004"]), (known, [])):
        assert report.ready, [f.code for f in report.findings]
        assert report_dict(report)["unverified"] == unverified
        last = render_text(report).strip().splitlines()[-1]
        assert last.startswith("READY (NOT VERIFIED: ARC004):") is bool(unverified), last


# --------------------------------------------------------------------------- build vs vendor


def test_a_rocm_torch_on_an_nvidia_machine_is_an_error_with_the_cuda_build() -> None:
    facts = _box(RTX4090, torch="2.13.0+rocm6.4")
    facts.torch.hip = "6.4"
    report = report_of(facts)
    wrong = finding(report, "TRC004")
    assert wrong.severity is Severity.ERROR and "ROCm (AMD) build" in wrong.title
    assert report.verdict.value == "not ready"
    assert wrong.command is not None
    assert wrong.command.startswith("pip install torch==2.13.0+cu")  # the label replaces it


def test_a_cuda_torch_on_an_amd_machine_is_an_error_with_the_rocm_build() -> None:
    from envcheck.facts import AmdFacts, AmdGpuFacts

    facts = _box(RTX4090, torch="2.13.0+cu126", cuda="12.6")
    facts.nvidia.gpus = []
    facts.nvidia.driver_version = facts.nvidia.cuda_driver_version = None
    facts.nvidia.device_nodes = []
    facts.amd = AmdFacts(gpus=[AmdGpuFacts(index=0, gfx="gfx942")])
    report = report_of(facts)
    wrong = finding(report, "TRC004")
    assert wrong.severity is Severity.ERROR and "CUDA (NVIDIA) build" in wrong.title
    # 2.13's gfx lists are not known; 2.11's rocm7.2 is known to carry gfx942 and comes first
    assert wrong.command is not None and wrong.command.endswith("/whl/rocm7.2")
    assert not [f for f in report.findings if f.code == "TRC002"]  # not "no GPU here"
