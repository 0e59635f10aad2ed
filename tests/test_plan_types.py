"""The resolver's answer as values: a frozen Planned or NoPlan, a Blocker, and the registry
of managers the CLI's --manager offers."""

from __future__ import annotations

import dataclasses

import pytest
from packaging.version import Version

from envcheck.install import (
    MANAGERS,
    Blocker,
    Manager,
    NoPlan,
    Planned,
    Wish,
    render,
    resolve,
)
from envcheck.install.managers import REGISTRY, lookup
from envcheck.install.plan import PlanRecord
from tests.fixtures import TABLES, profile


def test_a_plan_is_frozen_and_says_what_it_is() -> None:
    plan = resolve(profile("h100-server"), TABLES, Wish(torch="2.11"), "linux-x86_64")
    assert isinstance(plan, Planned) and plan.ok and plan.blocker is None
    assert plan.conflicts == () and plan.ways_out == ()
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.torch = "2.0.0"  # type: ignore[misc]


def test_no_plan_carries_its_blocker_as_a_value() -> None:
    plan = resolve(profile("h100-server"), TABLES, Wish(torch="0.1"), "linux-x86_64")
    assert isinstance(plan, NoPlan) and not plan.ok
    assert plan.blocker is Blocker.UNKNOWN and plan.to_dict()["blocker"] == "unknown"
    assert plan.torch is None and plan.packages == () and plan.index_url is None
    with pytest.raises(ValueError, match="nothing to render"):
        render(plan, "pip")


def test_both_answers_serialise_to_the_one_record() -> None:
    fields = [f.name for f in dataclasses.fields(PlanRecord)] + ["index_url"]
    ok = resolve(profile("h100-server"), TABLES, Wish(torch="2.11"), "linux-x86_64")
    no = resolve(profile("h100-server"), TABLES, Wish(torch="0.1"), "linux-x86_64")
    assert list(ok.to_dict()) == fields and list(no.to_dict()) == fields


def test_the_registry_names_every_manager_once() -> None:
    assert MANAGERS == tuple(m.value for m in Manager) == tuple(str(m) for m in REGISTRY)
    assert MANAGERS == ("pip", "uv", "conda", "requirements", "uv-project", "poetry")
    with pytest.raises(ValueError, match="unknown manager"):
        lookup("npm")


def test_a_wish_holds_its_manager_as_a_value() -> None:
    wish = Wish(manager="uv-project")
    assert wish.manager is Manager.UV_PROJECT and wish.manager == "uv-project"
    assert wish.cli_args == ["--manager", "uv-project"]
    assert Wish(variant="cu126").may_be_cuda and not Wish(variant="cpu").may_be_cuda
    assert Wish().may_be_cuda


def test_the_cli_offers_the_registry_s_managers() -> None:
    import click

    from envcheck.cli import cli

    for name in ("check", "install"):
        command = cli.get_command(click.Context(cli), name)
        assert command is not None
        option = next(p for p in command.params if p.name == "manager")
        assert isinstance(option.type, click.Choice)
        assert tuple(option.type.choices) == tuple(str(m) for m in REGISTRY), name


def test_the_variant_travels_as_a_value_and_prints_as_its_name() -> None:
    """Parsed once where the tables are read, carried as a Variant to the plan, and
    rendered with str(): the JSON and the command name it as before (cu126)."""
    from envcheck.values import Variant

    release = TABLES.release(Version("2.11.0"))
    assert release is not None
    held = [*(release.cuda_variants or ()), *(release.rocm_variants or ())]
    held += [*release.default_variant.values(), *release.arch_lists, *release.bundled]
    assert held and all(isinstance(v, Variant) for v in held)
    assert all(isinstance(b.variant, Variant) for b in TABLES.bundled_cuda)
    assert all(isinstance(v, Variant) for v in TABLES.uv_torch_backends.variants)
    plan = resolve(profile("h100-server"), TABLES, Wish(torch="2.11", variant="cu126"))
    assert isinstance(plan, Planned) and isinstance(plan.variant, Variant)
    assert plan.to_dict()["variant"] == str(plan.variant) == "cu126"
    assert render(plan, "pip").endswith("https://download.pytorch.org/whl/cu126")
