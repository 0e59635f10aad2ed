"""The README's headline example is what envcheck prints for that machine (its findings,
fixes and verdict), so the README cannot drift into a wrong answer again."""

from __future__ import annotations

from pathlib import Path

from tests.runner import envcheck

README = Path(__file__).resolve().parents[1] / "README.md"


def _body(text: str) -> str:
    """From the first finding to the verdict line: what does not depend on this host."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(("x ", "! ", "i ")))
    end = next(i for i, line in enumerate(lines) if line.startswith(("READY", "NOT READY")))
    return "\n".join(lines[start : end + 1])


def test_the_headline_example_is_what_envcheck_prints() -> None:
    readme = README.read_text()
    at = readme.index("On a machine with an RTX 5090, driver 535 and the CPU wheel")
    start = readme.index("```text\n", at) + len("```text\n")
    block = readme[start : readme.index("\n```", start)]
    out = envcheck(
        "check",
        "--no-deep",
        env={
            "ENVCHECK_DRIVER_VERSION": "535.104.05",
            "ENVCHECK_CUDA_DRIVER_VERSION": "12.2",
            "ENVCHECK_GPUS": "NVIDIA GeForce RTX 5090:12.0:32GiB",
            "ENVCHECK_FACT_TORCH_INSTALLED": "true",
            "ENVCHECK_FACT_TORCH_VERSION": "2.13.0+cpu",
            "ENVCHECK_FACT_TORCH_DIST_VERSION": "2.13.0+cpu",
            "ENVCHECK_FACT_TORCH_CUDA": "",
            "ENVCHECK_FACT_PYTHON_VERSION": "3.11.7",
            "COLUMNS": "100",
        },
    )
    assert _body(out.stdout) == _body(block)


def test_the_readme_installs_as_a_tool_from_the_root_of_a_clone() -> None:
    """`pipx install ./envcheck` and `uvx --from ./envcheck` failed from a clone: ./envcheck is
    the package folder, not a project pip or uv can build (checked by hand with both)."""
    import re

    root = README.parent
    sources = re.findall(r"^(?:pipx install|uvx --from) (\S+)", README.read_text(), re.M)
    assert len(sources) >= 2
    for source in sources:
        assert (root / source / "pyproject.toml").is_file(), source
