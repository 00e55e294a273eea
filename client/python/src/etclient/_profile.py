"""What Method.profile() and Method.stop_profile() return: the daemon's profile of one
method instance's executes (every operator, delegate call and step inside a delegate
call, timed), as `et-run --profile` takes it in-process."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Callable, Optional


@dataclass(frozen=True)
class ProfileRow:
    """Executes aggregated by operator (with its tensor arguments), delegate call, or
    step inside a delegate call (listed right after its call's row)."""

    kind: str  # "operator", "delegate" or "delegate step"
    name: str  # "aten::addmm.out", "XnnpackBackend", what a step runs
    args: str  # an operator's tensor arguments; "delegate N"; a step's first node
    calls: int  # over all the profiled executes
    total_ns: int
    min_ns: int
    max_ns: int

    @property
    def mean_ns(self) -> float:
        return self.total_ns / self.calls if self.calls else 0.0


class Profile:
    """A profile of one method's executes. From `with method.profile() as p:` it is
    filled when the block ends (reading it inside the block raises ValueError); from
    method.stop_profile() it is filled already.

    `executes`: how many were profiled; `dropped`: how many ran after max_executes were
    kept (not profiled); `execute_ns`: the profiled executes end to end; `rows`:
    ProfileRows, slowest first; `table`: the rows as `et-run --profile` prints them
    (str(profile) is the table too)."""

    def __init__(self, start: Optional[Callable[[], None]] = None,
                 stop: Optional[Callable[[], dict]] = None, data: Optional[dict] = None):
        self._start, self._stop = start, stop
        self._data = data

    @classmethod
    def _from_native(cls, d: dict) -> "Profile":
        return cls(data=d)

    def _filled(self, name: str) -> Any:
        if self._data is None:
            raise ValueError(f"the profile has no {name} yet: it is read after its `with` block "
                             "ends (or from method.stop_profile())")
        return self._data[name]

    @property
    def executes(self) -> int:
        return self._filled("executes")

    @property
    def dropped(self) -> int:
        return self._filled("dropped")

    @property
    def execute_ns(self) -> int:
        return self._filled("execute_ns")

    @property
    def rows(self) -> list:
        return [ProfileRow(**r) for r in self._filled("rows")]

    @property
    def table(self) -> str:
        return self._filled("table")

    def __str__(self) -> str:
        return self.table.rstrip("\n") if self._data is not None else "<profile running>"

    def __repr__(self) -> str:
        if self._data is None:
            return "<etclient.Profile running>"
        return f"<etclient.Profile executes={self.executes} dropped={self.dropped}>"

    def write_etdump(self, path: Any) -> None:
        """Writes the profile as an ETDump (ExecuTorch's format, one run per execute):
        executorch.devtools.Inspector(etdump_path=path) reads it."""
        with open(os.fspath(path), "wb") as f:
            f.write(self._filled("etdump"))

    def write_chrome_trace(self, path: Any) -> None:
        """Writes the profile as Chrome trace JSON, for Perfetto or chrome://tracing."""
        with open(os.fspath(path), "w", encoding="utf-8") as f:
            f.write(self._filled("chrome_trace"))

    def __enter__(self) -> "Profile":
        if self._start is None:
            raise ValueError("a profile from stop_profile() is over: `with method.profile():` "
                             "takes a new one")
        self._data = None
        self._start()
        return self

    def __exit__(self, exc_type, exc, tb) -> bool:
        assert self._stop is not None
        if exc_type is None:
            self._data = self._stop()
        else:
            # The block's error is the one to see; the profile ends either way.
            try:
                self._data = self._stop()
            except Exception:
                pass
        return False
