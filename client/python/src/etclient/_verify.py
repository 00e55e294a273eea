"""What Program.verify() returns: the daemon's run of a bundled program's (.bpte) test
cases, each output compared with the one the bundle expects (an element passes when
|got - expected| <= atol + rtol * |expected|)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class VerifyOutput:
    """One output of one case."""

    index: int
    passed: bool
    elements: int  # compared
    mismatched: int  # outside the tolerance
    max_abs_error: float
    max_rel_error: float  # over the elements whose expected value is not 0
    problem: str  # set when kind, dtype or shape differ (then not compared)


@dataclass(frozen=True)
class VerifyCase:
    """One test case: `index` counts within its method's cases. `error` says why it
    could not run (load, bind, execute); `outputs` is then empty."""

    method: str
    index: int
    passed: bool
    error: str
    outputs: list


@dataclass(frozen=True)
class VerifyReport:
    """Every case run, method by method and case by case in the file's order; `passed`:
    whether all of them passed. str() is a table, as `et-run --verify` prints."""

    rtol: float
    atol: float
    num_passed: int
    cases: list

    @property
    def passed(self) -> bool:
        return self.num_passed == len(self.cases)

    @classmethod
    def _from_native(cls, d: dict) -> "VerifyReport":
        cases = [VerifyCase(c["method"], c["index"], c["passed"], c["error"],
                            [VerifyOutput(**o) for o in c["outputs"]]) for c in d["cases"]]
        return cls(d["rtol"], d["atol"], d["num_passed"], cases)

    def __str__(self) -> str:
        lines = [f"{len(self.cases)} test case(s), rtol {self.rtol:g}, atol {self.atol:g}",
                 f"{'method':<16} {'case':>4} {'output':>6}  {'result':<6} {'max abs err':>13} "
                 f"{'max rel err':>13}  mismatched"]
        for c in self.cases:
            if c.error:
                lines.append(f"{c.method:<16} {c.index:>4} {'-':>6}  {'ERROR':<6} {c.error}")
            for o in c.outputs:
                head = f"{c.method:<16} {c.index:>4} {o.index:>6}  "
                if o.problem:
                    lines.append(f"{head}{'FAIL':<6} {o.problem}")
                else:
                    lines.append(f"{head}{'pass' if o.passed else 'FAIL':<6} "
                                 f"{o.max_abs_error:>13.3g} {o.max_rel_error:>13.3g}  "
                                 f"{o.mismatched}/{o.elements}")
        lines.append(f"{self.num_passed} of {len(self.cases)} case(s) passed")
        return "\n".join(lines)
