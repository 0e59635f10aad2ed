"""envcheck's pytest plugin, registered through the ``pytest11`` entry point (nothing to
configure): a marker that skips a test this machine cannot run, with envcheck's reason.

    @pytest.mark.envcheck(gpus=1, bf16=True)
    def test_train_step(): ...

The marker takes ``envcheck.require()``'s keywords. A test whose requirement is unmet is
skipped with the requirement, its root cause and the command that fixes it;
``--envcheck-strict`` (or ``envcheck_strict = true`` in the ini file) fails it instead, for
the GPU CI job that must not skip. The check runs lazily, once per process (each xdist
worker judges on its own, once): a suite with no marked test never imports envcheck's core,
and ``--collect-only`` runs nothing. Its one-line summary goes under pytest's header (under
xdist, into the terminal summary, since workers print no header). A broken envcheck never
breaks the suite: it says so, and marked tests run unskipped unless strict.

This module imports nothing of envcheck at pytest's start: pytest loads it in every
environment where envcheck is installed, so it must cost nothing there.
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING, Any, Dict, List, MutableMapping, Optional, Set

import pytest

if TYPE_CHECKING:
    from .marker import MarkerJudge

MARK = "envcheck"
SUMMARY = "envcheck_summary"  # the workeroutput key a worker hands its summary line under


class _State:
    def __init__(self, strict: bool) -> None:
        self.strict = strict
        self.marks: List[Dict[str, Any]] = []  # every marked test's keywords, collected
        self.judge: Optional[MarkerJudge] = None
        self.header_shown = False
        self.summaries: Set[str] = set()  # the controller's, from its workers' reports

    def marker_judge(self) -> MarkerJudge:
        if self.judge is None:
            from .marker import MarkerJudge

            self.judge = MarkerJudge(self.marks)
        return self.judge


# Per config and per item, kept beside them rather than in pytest's stash, which pytest < 7
# lacks: the plugin is loaded wherever envcheck is installed and must not break an older pytest.
_STATES: MutableMapping[Any, _State] = weakref.WeakKeyDictionary()
_UNMET: MutableMapping[Any, str] = weakref.WeakKeyDictionary()  # strict: why a test fails


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("envcheck", "envcheck: skip tests this machine cannot run")
    group.addoption(
        "--envcheck-strict",
        action="store_true",
        default=None,
        help="fail, instead of skip, tests whose @pytest.mark.envcheck requirement this "
        "machine does not meet (a GPU CI job that must not skip)",
    )
    parser.addini("envcheck_strict", "as --envcheck-strict", type="bool", default=False)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "envcheck(**requirements): skip unless this machine meets them (envcheck.require()'s "
        "keywords: torch, python, cuda, gpus, gpu_memory, compute_capability, dtypes, bf16, "
        "fp16, tf32, backend, smoke, ignore)",
    )
    strict = config.getoption("envcheck_strict")
    if strict is None:
        strict = bool(config.getini("envcheck_strict"))
    state = _State(bool(strict))
    _STATES[config] = state
    config.pluginmanager.register(_Summary(state), "envcheck-summary")
    if config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(_Controller(state), "envcheck-xdist")


def pytest_collection_modifyitems(config: pytest.Config, items: List[pytest.Item]) -> None:
    _STATES[config].marks = [dict(m.kwargs) for i in items for m in i.iter_markers(MARK)]


def pytest_report_collectionfinish(config: pytest.Config) -> List[str]:
    state = _STATES[config]
    if not state.marks or config.option.collectonly:
        return []
    state.header_shown = True
    return [state.marker_judge().summary()]


@pytest.hookimpl(tryfirst=True)  # before pytest's own skip marks are read (the same hook)
def pytest_runtest_setup(item: pytest.Item) -> None:
    marks = list(item.iter_markers(MARK))
    if not marks:
        return
    from .marker import MarkerError

    state = _STATES[item.config]
    judge = state.marker_judge()
    reasons: List[str] = []
    broken: List[str] = []
    for mark in marks:
        try:
            outcome = judge.judge(tuple(mark.args), dict(mark.kwargs))
        except MarkerError as exc:  # the test's own bug, on any machine: it fails
            _UNMET[item] = f"envcheck marker: {exc}"
            return
        if not outcome.met:
            (broken if outcome.broken else reasons).append(outcome.reason)
    if reasons and state.strict:  # failed by the test's call: FAILED, not an error in setup
        _UNMET[item] = "envcheck (strict): " + "; ".join(reasons)
        return
    if reasons:  # a skip mark, so pytest reports it at the test, not at this line
        item.add_marker(pytest.mark.skip(reason="; ".join(reasons)))
        return
    if broken and state.strict:
        _UNMET[item] = "envcheck (strict): " + "; ".join(broken)
        return
    for text in broken:
        item.warn(pytest.PytestWarning(f"{text}: the test runs unskipped"))


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_call(item: pytest.Item) -> None:
    unmet = _UNMET.get(item)
    if unmet is not None:
        pytest.fail(unmet, pytrace=False)


def judge_of(config: pytest.Config) -> Optional[MarkerJudge]:
    """The judge of this pytest process; None while no marked test has been judged (and in
    a suite without one, ever)."""
    return _STATES[config].judge


class _Summary:
    """Under xdist the workers print no header: each worker hands its summary line to the
    controller through xdist's ``workeroutput`` (never into the test reports, which would put
    it into the user's JUnit XML), and the controller writes the lines at the end."""

    def __init__(self, state: _State) -> None:
        self.state = state

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        output = getattr(session.config, "workeroutput", None)  # set in an xdist worker only
        if output is not None and self.state.judge is not None:
            output[SUMMARY] = self.state.judge.summary()

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if self.state.header_shown:
            return
        for line in sorted(self.state.summaries):
            terminalreporter.write_line(line)


class _Controller:
    """Registered only where xdist is loaded: its hook exists only there."""

    def __init__(self, state: _State) -> None:
        self.state = state

    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        line = getattr(node, "workeroutput", {}).get(SUMMARY)
        if isinstance(line, str):
            self.state.summaries.add(line)
