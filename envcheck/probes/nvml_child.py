"""NVML asked in a child process, and the answer as plain JSON values.

NVML calls are C calls into the driver library, which can block on a wedged GPU, crash (a
segfault in libnvidia-ml) or end the process (a library that calls ``exit()``). So they never
run in envcheck's own process: a child asks NVML and prints its answer (``envcheck._proc``: a
process group of its own, a timeout, a watchdog, bounded output). On POSIX the child is a fork
of envcheck, which costs a ``fork()`` where a fresh interpreter would import Python, envcheck
and the binding again (see ``_proc._Forked`` for why a fork is safe enough here); where there
is no ``fork()`` it is a fresh interpreter running the same function.

The answer is NvidiaFacts' plain form (``facts_codec.to_plain``): what the child did not
answer is NVML's error, so that the check and the healthcheck say it instead of reading it as
"no GPU": ``timeout`` (a hang), ``crashed`` (a signal ended it: "libnvidia-ml crashed
(SIGSEGV) in nvmlInit", naming the NVML call it was in) and ``no_answer`` (it exited without
an answer). Every failure NVML reports itself is recorded under its NVML code name
(``library_not_found``, ``lib_rm_version_mismatch``, ...) with NVML's own message.

This module is the part both ``envcheck check`` (envcheck.probes.nvidia, which makes the
answer facts) and ``envcheck healthcheck`` use. It loads no facts model: on a machine where
NVML fails to start, the healthcheck decides from the plain answer alone, and the GPUs' query
(``query``, which needs the model) is called in the child only once NVML has started.
"""

from __future__ import annotations

import contextlib
import json
import os
from types import ModuleType

from .. import _proc
from ..nvml_errors import describe, error_names

TYPE_CHECKING = False  # not typing's own: no module a healthcheck loads imports typing
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, List, Optional

    from ._files import Root

    Answer = Dict[str, Any]  # NvidiaFacts' plain form
    # What the child asks once nvmlInit() has worked: (nvml, error names, show ids) -> answer.
    Query = Callable[[Any, Dict[int, str], bool], Answer]

# The child's lines on stdout: "step NAME" before each NVML call, then "answer {...}".
MARK = "envcheck-nvml: "
FORK = hasattr(os, "fork")  # else the child is a fresh interpreter (Windows)
# what that fresh interpreter runs: probes.nvidia's, which serves the answer with its query
FRESH = (f"{__package__}.nvidia", "_serve_fresh")


def device_nodes(root: Root) -> List[str]:
    """The /dev/nvidia* nodes under ``root``: the driver's devices, with or without NVML."""
    try:
        names = os.listdir(os.path.join(root, "dev"))
    except OSError:
        return []
    return sorted(f"/dev/{name}" for name in names if name.startswith("nvidia"))


def failed(error: str, message: str) -> Answer:
    """The answer of an NVML that did not start (or a child that did not answer)."""
    return {"nvml": {"ok": False, "error": error, "message": message}}


def failure(answer: Answer) -> Optional[Dict[str, Any]]:
    """The answer's NVML status ({"error": ..., "message": ...}) when NVML did not answer."""
    status = answer.get("nvml")
    if isinstance(status, dict) and status.get("ok") is True:
        return None
    if isinstance(status, dict):
        return status
    return {"error": "no_answer", "message": "NVML's answer could not be read: no NVML status"}


def ask(nvml: Optional[ModuleType], timeout: float, show_ids: bool, query: Query) -> Answer:
    """NVML's answer, asked in a child (see the module). ``nvml`` replaces ``pynvml`` (tests
    pass a fake). Where there is no fork, a fresh interpreter runs FRESH with ``show_ids``."""
    if not FORK:
        if nvml is not None:
            raise ValueError("a stand-in NVML module needs os.fork()")
        code = _fresh_code(show_ids)
        child = _proc.Child([*_proc.python_argv(), "-c", code], timeout, marker=MARK)
        return read_answer(child.wait(), timeout)
    if nvml is None:
        try:  # imported before the fork: the child imports nothing
            import pynvml
        except Exception as exc:  # not installed, or a broken install
            return failed("bindings_missing", str(exc))
        nvml = pynvml
    bound: ModuleType = nvml  # for the closure: mypy and the reader both see it is set
    child = _proc.Child(
        ["<fork: NVML>"], timeout, marker=MARK, target=lambda: serve(bound, show_ids, query)
    )
    return read_answer(child.wait(), timeout)


def read_answer(result: _proc.ChildResult, timeout: float) -> Answer:
    steps, answer = [], None
    for line in result.stdout.splitlines():
        if line.startswith(MARK + "step "):
            steps.append(line[len(MARK + "step ") :].strip())
        elif line.startswith(MARK + "answer "):
            answer = line[len(MARK + "answer ") :]
    where = f" in {steps[-1]}" if steps else " before its first NVML call"
    if result.timed_out:
        return failed(
            "timeout", f"NVML did not answer within {timeout:g} s (a hung driver or GPU){where}"
        )
    if answer is not None:
        try:
            plain = json.loads(answer)
        except ValueError as exc:  # a broken line is no answer
            return failed("no_answer", f"NVML's answer could not be read: {exc}")
        if isinstance(plain, dict):
            return plain
        return failed("no_answer", "NVML's answer could not be read: not an object")
    last = (result.stderr.strip().splitlines() or [""])[-1]
    said = f": {last}" if last else ""
    if result.signal:
        return failed("crashed", f"libnvidia-ml crashed ({result.signal}){where}{said}")
    return failed(
        "no_answer", f"NVML exited without answering (exit status {result.returncode}){where}{said}"
    )


def serve(nvml: ModuleType, show_ids: bool, query: Query) -> None:
    """The child's work: ask NVML, saying each call before it is made (the last one said
    is where a crash or a hang happened), then print the answer as one JSON line."""
    answer = _answer(_Traced(nvml, lambda name: say(f"{MARK}step {name}\n")), show_ids, query)
    say(f"{MARK}answer {json.dumps(answer)}\n")


def _answer(nvml: Any, show_ids: bool, query: Query) -> Answer:
    names = error_names(nvml)
    try:
        nvml.nvmlInit()
    except Exception as exc:
        return failed(*describe(nvml, names, exc))
    try:
        return query(nvml, names, show_ids)
    finally:
        with contextlib.suppress(Exception):
            nvml.nvmlShutdown()


def say(text: str) -> None:
    data = text.encode("utf-8", "replace")
    while data:
        data = data[os.write(1, data) :]


class _Traced:
    """``nvml`` with every ``nvml*`` function call announced first, by ``say(name)``."""

    def __init__(self, nvml: ModuleType, say: Callable[[str], None]) -> None:
        self._nvml, self._say = nvml, say

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._nvml, name)
        if not (name.startswith("nvml") and callable(value)):
            return value

        def call(*args: Any) -> Any:
            self._say(name)
            return value(*args)

        return call

    def __dir__(self) -> List[str]:
        return dir(self._nvml)


def _fresh_code(show_ids: bool) -> str:
    """What a fresh interpreter runs to serve NVML's answer: ``FRESH(show_ids)``."""
    module, function = FRESH
    package_parent = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
    return (
        f"import sys; sys.path.insert(0, {package_parent!r}); "
        f"from {module} import {function}; {function}({show_ids!r})"
    )
