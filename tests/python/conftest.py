"""Shared fixtures of the Python tests. Run by scripts/test.sh (through ctest) against
the build tree: PYTHONPATH=<build>/python:<source>/python, SCHEDSIM_CLI=<build>/schedsim."""
import os
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "golden" / "scenario.yaml"


@pytest.fixture(scope="session")
def cli():
    path = os.environ.get("SCHEDSIM_CLI", str(ROOT / "build" / "schedsim"))
    if not os.path.exists(path):
        pytest.skip(f"the schedsim CLI is not built at {path} (set SCHEDSIM_CLI)")
    return path


@pytest.fixture(scope="session")
def golden_yaml():
    return str(GOLDEN)


@pytest.fixture(scope="session")
def packaged_scenarios():
    """The shipped scenarios an installed package has: all of them, except one naming a
    $SCHEDSIM_DATA/ file that is missing at build time (python/CMakeLists.txt)."""
    data = os.environ.get("SCHEDSIM_DATA") or str(ROOT.parent / "shared" / "data")
    out = []
    for p in sorted((ROOT / "experiments" / "configs").glob("*.yaml")):
        refs = re.findall(r"\$SCHEDSIM_DATA/([^\s},\"']+)", p.read_text())
        if all(os.path.exists(os.path.join(data, r)) for r in refs):
            out.append(p.stem)
    return out


def pytest_sessionfinish(session, exitstatus):
    """Exit 77 (ctest's skip code for these files) when tests were found and all of them
    skipped; pytest's own exit 5 also means "no test collected", which must fail."""
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is None or exitstatus not in (0, 5):
        return
    stats = reporter.stats
    if stats.get("skipped") and not any(stats.get(k) for k in ("passed", "failed", "error", "xfailed", "xpassed")):
        session.exitstatus = 77
