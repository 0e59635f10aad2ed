"""Facts: the JSON round trip and clear errors for documents that do not fit."""

from __future__ import annotations

import dataclasses
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from envcheck.facts import SCHEMA_VERSION, Facts, FactsError, GpuFacts, NvidiaFacts
from envcheck.probes.nvidia import probe_nvidia
from envcheck.values import Arch, ComputeCapability, Gfx
from tests.fake_nvml import MACHINES, make_nvml

# JSON has no NaN or infinity; Facts never holds them.
st.register_type_strategy(float, st.floats(allow_nan=False, allow_infinity=False))
# Values are made by their parsers' rules (a capability's minor is one digit, an arch's
# capability has a major of at least 1), as a probe or a document gives them.
_capabilities = st.builds(
    ComputeCapability, st.integers(min_value=0, max_value=99), st.integers(0, 9)
)
st.register_type_strategy(ComputeCapability, _capabilities)
st.register_type_strategy(
    Arch,
    st.builds(
        Arch,
        st.sampled_from(["sm", "compute"]),
        st.builds(ComputeCapability, st.integers(1, 99), st.integers(0, 9)),
        st.sampled_from(["", "a", "f"]),
    ),
)
st.register_type_strategy(
    Gfx,
    st.builds(
        Gfx,
        st.from_regex(r"gfx[0-9a-f]{3,4}", fullmatch=True),
        st.sampled_from(["", "xnack-", "sramecc+:xnack-"]),
    ),
)


@settings(max_examples=60, deadline=None)
@given(st.from_type(Facts).map(lambda f: dataclasses.replace(f, schema_version=SCHEMA_VERSION)))
def test_any_facts_round_trips_through_json(facts: Facts) -> None:
    again = Facts.from_json(facts.to_json())
    assert again == facts


def test_a_probed_gpu_server_round_trips(tmp_path) -> None:
    (tmp_path / "dev").mkdir()
    facts = Facts(nvidia=probe_nvidia(tmp_path, make_nvml(MACHINES["8xH100-SXM"])))
    text = facts.to_json()
    again = Facts.from_json(text)
    assert again == facts
    assert again.nvidia.gpus[7].compute_capability == "9.0"
    assert json.loads(text)["schema_version"] == SCHEMA_VERSION


def test_unknown_keys_are_ignored_and_missing_ones_default() -> None:
    facts = Facts.from_dict({"nvidia": {"driver_version": "550.54.15", "future_field": 1}})
    assert facts.nvidia == NvidiaFacts(driver_version="550.54.15")
    assert facts.system.os == ""


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ("[1, 2]", "a Facts document is a JSON object, not a list"),
        ("{", "not JSON"),
        ('{"schema_version": 99}', "schema_version 99 is newer than this envcheck understands"),
        ('{"schema_version": "1"}', "schema_version: expected an integer"),
        ('{"system": []}', "system: expected an object, got a list"),
        (
            '{"system": {"cpus_logical": "eight"}}',
            "system.cpus_logical: expected an integer, got a string",
        ),
        (
            '{"system": {"cpus_logical": true}}',
            "system.cpus_logical: expected an integer, got a boolean",
        ),
        (
            '{"nvidia": {"gpus": [{"index": 0}, {"index": "1"}]}}',
            r"nvidia.gpus\[1\].index: expected an integer",
        ),
        ('{"nvidia": {"gpus": {"index": 0}}}', "nvidia.gpus: expected a list, got an object"),
        (
            '{"python": {"externally_managed": "no"}}',
            "python.externally_managed: expected true or false",
        ),
        (
            '{"environment": {"CUDA_HOME": 5}}',
            "environment.CUDA_HOME: expected a string, got an integer",
        ),
        (
            '{"torch_runtime": {"duration_s": "fast"}}',
            "torch_runtime.duration_s: expected a number",
        ),
    ],
)
def test_bad_documents_name_the_field(document: str, message: str) -> None:
    with pytest.raises(FactsError, match=message):
        Facts.from_json(document)


def test_integers_are_accepted_where_numbers_are_expected() -> None:
    facts = Facts.from_dict({"torch_runtime": {"duration_s": 2}})
    assert facts.torch_runtime.duration_s == 2.0
    assert isinstance(facts.torch_runtime.duration_s, float)


def test_every_field_is_documented() -> None:
    """docs/facts.md names every field of every Facts section."""
    from pathlib import Path

    doc = (Path(__file__).parent.parent / "docs" / "facts.md").read_text()
    missing = []

    def walk(cls: type, prefix: str) -> None:
        for f in dataclasses.fields(cls):
            name = f"{prefix}{f.name}"
            if f"`{name}`" not in doc:
                missing.append(name)

    import envcheck.facts as m

    for section in (
        m.Facts,
        m.SystemFacts,
        m.CgroupFacts,
        m.DiskFacts,
        m.PythonFacts,
        m.NvidiaFacts,
        m.NvmlStatus,
        m.AmdFacts,
        m.AmdGpuFacts,
        m.GpuFacts,
        m.GpuPairFacts,
        m.NvLinkFacts,
        m.NicFacts,
        m.TorchFacts,
        m.PackageFacts,
        m.CondaPackageFacts,
        m.TorchRuntimeFacts,
        m.CudaDeviceFacts,
        m.ToolkitFacts,
        m.ProbeError,
    ):
        walk(section, "")
    assert missing == []


def test_gpu_defaults_are_unknown_not_zero() -> None:
    gpu = GpuFacts()
    assert gpu.memory_total is None and gpu.ecc_mode is None and gpu.status == "ok"
