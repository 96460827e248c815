"""Shared fixtures of the Python tests. Run by scripts/test.sh (through ctest) against
the build tree: PYTHONPATH=<build>/python:<source>/python, SCHEDSIM_CLI=<build>/schedsim."""
import os
import pathlib

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
