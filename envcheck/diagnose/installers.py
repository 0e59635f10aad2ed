"""What installers say of the machine they ran on: conda's virtual packages (``__cuda`` is
the CUDA the driver supports, ``__glibc`` the C library), conda's platform subdir
(``linux-64``, ``osx-arm64``), and uv's line naming the interpreter it used.

A value is taken only when the text gives one (conda's solver lists what was asked for next
to what the machine has: ``__cuda >=11.8`` is a requirement, ``__cuda==11.4=0`` and
``__cuda-11.4-0`` are the machine's), and never over what another reader took.
"""

from __future__ import annotations

from typing import Iterable, List

from .._patterns import compile_on_use
from .into_facts import put
from .reading import Reading

WHERE = "installer output"
# the machine's virtual package: "__cuda==11.4=0", "__cuda=12.2=0", "__cuda-10.2-0"
_VIRTUAL_CUDA = compile_on_use(r"__cuda(?:==?|-)(\d{1,2}\.\d{1,2})(?:=|-)\w{1,8}\b")
_VIRTUAL_GLIBC = compile_on_use(r"__glibc(?:==?|-)(\d\.\d{1,2})(?:=|-)\w{1,8}\b")
# conda's subdir after "platform :", a channel's "::" or "/", or "feature:|@/": each way in
# starts with a letter of its own, "platform" in either case as "P" or "p" (no other letter is
# a "p" to a pattern ignoring case), so the engine tries the pattern only where one of
# P, p, f, : and / stands (three times faster than "(?i:platform)", tried everywhere)
_SUBDIR = compile_on_use(
    r"(?:P(?i:latform)\s*:\s*|p(?i:latform)\s*:\s*|feature:\|?@?/|::|/)"
    r"(linux-64|linux-aarch64|osx-64|osx-arm64|win-64|win-32)\b"
)
_SUBDIR_PLATFORM = {
    "linux-64": ("Linux", "x86_64"),
    "linux-aarch64": ("Linux", "aarch64"),
    "osx-64": ("Darwin", "x86_64"),
    "osx-arm64": ("Darwin", "arm64"),
    "win-64": ("Windows", "AMD64"),
    "win-32": ("Windows", "x86"),
}
# a wheel pip fetched to install: pip takes only wheels for the Python it runs under, so the
# CPython tag is that Python's ("Using cached torch-1.11.0-cp38-cp38-manylinux1_x86_64.whl")
_PIP_WHEEL = compile_on_use(
    r"^\s*(?:Downloading|Using cached) \S{0,300}?-cp3(\d{1,2})-(?:cp3\d{1,2}m?|none)-[\w.]{1,120}\.whl\b"
)
# pip told to fetch for another machine: its wheels say nothing of this one (literals, each
# found by one search of the text: a pattern of them is tried wherever a "p" or "-" stands)
_ELSEWHERE = (
    "pip download", "pip3 download", "--python-version", "--platform ", "--platform=",
    "--only-binary",
)  # fmt: skip
_UV_INTERPRETER = compile_on_use(
    r"Using (?:CPython|Python|PyPy) (3\.\d{1,2}\.\d{1,2})(?:\S{0,20})? (?:interpreter|environment) at"
)


def read_installers(text: str, reading: Reading) -> None:
    words = ("__", "Using ", "latform", "-64", "-arm64", ".whl")
    if not any(w in text for w in words):
        return
    took = False
    cuda = _distinct(m.group(1) for m in _VIRTUAL_CUDA.finditer(text))
    if len(cuda) == 1 and put("nvidia.cuda_driver_version", cuda[0], reading):
        reading.where.setdefault("nvidia.cuda_driver_version", f"{WHERE} (conda's __cuda)")
        took = True
    glibc = _distinct(m.group(1) for m in _VIRTUAL_GLIBC.finditer(text))
    if len(glibc) == 1 and not reading.facts.system.glibc:
        reading.facts.system.glibc = glibc[0]
        took = True
    named = any(d in text for d in _SUBDIR_PLATFORM)  # every match names one, case kept
    subdirs = _distinct(m.group(1) for m in _SUBDIR.finditer(text)) if named else []
    if len(subdirs) == 1 and subdirs[0] in _SUBDIR_PLATFORM:
        os_name, machine = _SUBDIR_PLATFORM[subdirs[0]]
        s = reading.facts.system
        if not s.os or s.os == os_name:
            took = put("system.os", os_name, reading) or took
            if not s.machine:
                s.machine, took = machine, True
    python = _distinct(m.group(1) for m in _UV_INTERPRETER.finditer(text))
    if not python and ".whl" in text and not any(w in text for w in _ELSEWHERE):
        tags = (_PIP_WHEEL.match(line) for line in text.splitlines() if ".whl" in line)
        python = _distinct(f"3.{m.group(1)}" for m in tags if m)
    if len(python) == 1 and put("python.version", python[0], reading):
        took = True
    if took and WHERE not in reading.pieces:
        reading.pieces.append(WHERE)


def _distinct(values: Iterable[str]) -> List[str]:
    out: List[str] = []
    for value in values:
        if value not in out:
            out.append(value)
        if len(out) > 4:
            break
    return out
