"""pytest plugin (installed with etclient, loaded through the pytest11 entry point):
the tests of a run share one warm et-serverd, started by the first test that needs it,
in every pytest-xdist worker alike; it exits by itself once idle (docs/ci.md).

Fixtures:
  et_runtime   the process's etclient.Runtime (one per test session)
  et_program   et_program(path, data_path=None): a program loaded once per process

Options: --et-serverd-socket PATH, --et-serverd-no-spawn, --et-serverd-idle-exit SECONDS.
"""

from __future__ import annotations

import os
from typing import Any, Optional

import pytest

_STATUS = "etclient_status"  # in a worker's workeroutput: the daemon's status at its end
_used_here = False  # this process used the daemon (set by et_runtime)
_statuses: list = []  # the daemon's status as this process and its xdist workers saw it


def pytest_addoption(parser: Any) -> None:
    group = parser.getgroup("etclient", "et-serverd (etclient's pytest plugin)")
    group.addoption("--et-serverd-socket", default=None, metavar="PATH",
                    help="the daemon's socket (default: $ETSERVER_SOCKET, else the per-user "
                         "default)")
    group.addoption("--et-serverd-no-spawn", action="store_true",
                    help="never start a daemon: fail when none answers (as ETSERVER_SPAWN=0)")
    group.addoption("--et-serverd-idle-exit", type=float, default=None, metavar="SECONDS",
                    help="how long a daemon started by the tests lives once idle (default: "
                         "$ETSERVER_IDLE_EXIT, else 300)")


def _runtime(config: Any, spawn: Optional[bool] = None):
    import etclient

    if spawn is None and config.getoption("et_serverd_no_spawn"):
        spawn = False
    return etclient.Runtime.get(config.getoption("et_serverd_socket"), spawn=spawn,
                                idle_exit=config.getoption("et_serverd_idle_exit"))


@pytest.fixture(scope="session")
def et_runtime(pytestconfig: Any):
    """The process's etclient.Runtime: one session with the daemon, shared by all tests
    of this process (and the daemon by every process of the run)."""
    global _used_here
    runtime = _runtime(pytestconfig)
    _used_here = True
    return runtime


@pytest.fixture(scope="session")
def et_program(et_runtime: Any):
    """et_program(path, data_path=None) -> etclient.Program, loaded once per process
    (the daemon holds one copy for all processes: later loads send only its hash). Each
    call hands out its own Program, so load_method() gives each caller (each test) its
    own method instance: no state is shared between tests."""
    loaded: dict = {}

    def load(path: Any, data_path: Any = None):
        key = (os.fspath(path), None if data_path is None else os.fspath(data_path))
        if key not in loaded:
            loaded[key] = et_runtime.load_program(key[0], data_path=key[1])
        return loaded[key]._fresh()

    return load


def _merged(statuses: list) -> dict:
    """The latest view: counters only grow, so each field's largest value is the one
    the last process to ask saw (the daemon may have exited since: it is not asked)."""
    merged = dict(statuses[0])
    for status in statuses[1:]:
        for key, value in status.items():
            if isinstance(value, int) and value > merged.get(key, 0):
                merged[key] = value
    return merged


class _XdistHooks:
    """Registered only under pytest-xdist: its hooks exist only there."""

    @pytest.hookimpl
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        status = getattr(node, "workeroutput", {}).get(_STATUS)
        if status:
            _statuses.append(status)


def pytest_configure(config: Any) -> None:
    if config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(_XdistHooks(), "etclient-xdist")


def pytest_sessionfinish(session: Any) -> None:
    # Asked while this process still holds its session, so the daemon is surely there.
    if _used_here:
        try:
            _statuses.append(_runtime(session.config).server_status())
        except Exception:  # the summary never fails a run
            pass
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None and _statuses:
        workeroutput[_STATUS] = _statuses[-1]


def pytest_terminal_summary(terminalreporter: Any, config: Any) -> None:
    if hasattr(config, "workerinput") or not _statuses:
        return
    status = _merged(_statuses)
    shared = status["program_loads_shared"]
    terminalreporter.write_line(
        f"et-serverd {status['version']}: up {status['uptime_seconds']} s; "
        f"{status['program_loads']} program loads, {shared} of them shared across "
        f"processes (loaded once); {status['executes']} executes served; "
        f"{status['programs']} program(s) loaded at the end")
