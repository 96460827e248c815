"""schedsim: a fast, reproducible simulator for scheduling AI compute.

The C++ core runs the simulation; this package gives it a Python face:

    import schedsim
    cfg = schedsim.load_config("my_scenario.yaml")       # or YAML text, or a dict
    result = schedsim.simulate(cfg, policy="sjf")         # summary dict + per-job records
    env = schedsim.make(cfg)                              # a gymnasium.Env
    venv = schedsim.VectorEnv(cfg, num_envs=8)            # batched, stepped in C++

See docs/python.md.
"""
from pkgutil import extend_path

# In a build tree the extension lives in <build>/python/schedsim and the pure-Python
# files in <source>/python/schedsim: with both folders on sys.path, this makes them one
# package. In an installed package both are in one folder and this changes nothing.
__path__ = extend_path(__path__, __name__)

try:
    from . import _schedsim
except ImportError as e:  # pragma: no cover - only without a built extension
    raise ImportError(
        "schedsim: the C++ extension _schedsim is not built or not on the path "
        "(pip install . from the repository, or build with CMake and put <build>/python "
        "and <source>/python on PYTHONPATH): " + str(e)
    ) from e

__version__ = _schedsim.__version__

SimError = _schedsim.SimError
InputError = _schedsim.InputError
PolicyError = _schedsim.PolicyError
Job = _schedsim.Job
View = _schedsim.View
Start = _schedsim.Start
Preempt = _schedsim.Preempt
Move = _schedsim.Move
SetCooling = _schedsim.SetCooling

from .config import Config, load_config, scenario_path, scenarios  # noqa: E402
from .policy import Policy  # noqa: E402
from .simulate import JobTable, SimulationResult, simulate  # noqa: E402
from .advise import AdviseResult, advise  # noqa: E402


def policies():
    """Names of the built-in policies, in registry order."""
    return [p["name"] for p in _schedsim.policies()]


def policy_info(name=None):
    """Description and documented options of every built-in policy (or of one)."""
    infos = _schedsim.policies()
    if name is None:
        return infos
    for p in infos:
        if p["name"] == name:
            return p
    raise ValueError(f"policy: expected one of {', '.join(x['name'] for x in infos)}, got {name!r}")


def ledger_verify(path, *, key_file=None):
    """Recomputes the hash chain of a run's ledger.csv (docs/market.md#settlement-ledger).

    key_file: the file holding the key of a keyed ledger (HMAC-SHA256); None for an
    unkeyed one.
    Returns a dict: ok (bool), problem ("" when ok, else the first bad line), rows and
    the totals device_hours, energy_kwh, electricity_usd, compute_usd, co2_kg.
    Raises InputError when a file cannot be read."""
    import os

    for name, v in (("path", path), ("key_file", key_file)):
        if not (isinstance(v, (str, os.PathLike)) or (v is None and name == "key_file")):
            raise TypeError(f"{name}: expected a path (str or os.PathLike), got {type(v).__name__}")
    return _schedsim.ledger_verify(os.fspath(path), None if key_file is None else os.fspath(key_file))


HAS_ENV = getattr(_schedsim, "HAS_ENV", False)
if HAS_ENV:
    from .env import SchedsimEnv, VectorEnv, make, register_envs  # noqa: E402
    from .evaluate import Evaluation, evaluate  # noqa: E402
    from .compare import Comparison, compare, sweep  # noqa: E402

    register_envs()

__all__ = [
    "__version__", "SimError", "InputError", "PolicyError", "Job", "View", "Start", "Preempt", "Move", "SetCooling",
    "Config", "load_config", "scenarios", "scenario_path", "Policy", "JobTable", "SimulationResult", "simulate", "AdviseResult", "advise",
    "policies", "policy_info", "ledger_verify", "HAS_ENV",
] + (["SchedsimEnv", "VectorEnv", "make", "register_envs", "Evaluation", "evaluate", "Comparison", "compare", "sweep"] if HAS_ENV else [])
