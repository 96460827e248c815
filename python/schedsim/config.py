"""Scenario loading: the same YAML schema, checks and error messages as the CLI."""
import os

from . import _schedsim

class Config:
    """A parsed, validated scenario (immutable). Build it with load_config()."""

    __slots__ = ("_scenario",)

    def __init__(self, scenario):
        if not isinstance(scenario, _schedsim.Scenario):
            raise TypeError(f"Config: expected a schedsim._schedsim.Scenario (use schedsim.load_config), got {type(scenario).__name__}")
        self._scenario = scenario

    @property
    def seed(self):
        return self._scenario.seed

    @property
    def name(self):
        return self._scenario.name

    @property
    def source(self):
        """Where the document came from (a path, "<string>", "<dict>")."""
        return self._scenario.source

    @property
    def num_devices(self):
        return self._scenario.num_devices

    @property
    def has_physics(self):
        return self._scenario.has_physics

    def resolved(self):
        """The fully resolved configuration (every default filled in), as results.json records it."""
        return self._scenario.resolved()

    def with_seed(self, seed):
        """The same scenario with another seed."""
        return Config(self._scenario.with_seed(_check_seed(seed)))

    def __repr__(self):
        return f"schedsim.Config(source={self.source!r}, name={self.name!r}, seed={self.seed}, devices={self.num_devices})"


# Seeds are 0 .. 2^63-1 everywhere (YAML seed:, the CLI's --seed, sweep seeds): every
# recorded seed fits numpy's int64 and can be given again to rerun the same run.
MAX_SEED = 2**63 - 1


def _check_seed(seed):
    if isinstance(seed, bool) or not hasattr(seed, "__index__"):
        raise TypeError(f"seed: expected a non-negative int, got {type(seed).__name__} {seed!r}")
    seed = int(seed)
    if seed < 0:
        raise ValueError(f"seed: expected a non-negative int, got {seed}")
    if seed > MAX_SEED:
        raise ValueError(f"seed: must be at most {MAX_SEED} (2^63-1, the seed range of the CLI and of results.json), got {seed}")
    return seed


def _looks_like_yaml(text):
    return "\n" in text or ": " in text or text.lstrip().startswith("{")


def load_config(config=None, *, overrides=None, seed=None):
    """Loads and validates a scenario.

    config: None (the built-in default scenario), a path (str or os.PathLike) to a YAML
    file, YAML text (a str with a newline or "key: value"), a dict with the same
    structure as the YAML document, or a Config (returned as is, with `seed` applied).
    overrides: CLI-style "key.path=value" strings (as `schedsim run --set`).
    seed: replaces the scenario's seed.

    Raises schedsim.InputError (a ValueError) with the CLI's message for a bad scenario,
    TypeError for an argument of the wrong type.
    """
    if overrides is not None:
        if isinstance(overrides, str) or not all(isinstance(o, str) for o in overrides):
            raise TypeError(f"overrides: expected a list of 'key.path=value' strings, got {overrides!r}")
        overrides = list(overrides)
    if seed is not None:
        seed = _check_seed(seed)
    if isinstance(config, Config):
        if overrides:
            raise ValueError("overrides: a Config is already parsed; pass overrides with the YAML file, text or dict instead")
        return config if seed is None else config.with_seed(seed)
    if config is None:
        return Config(_schedsim.Scenario.from_string(_schedsim.default_scenario_yaml(), "built-in default scenario", overrides, seed))
    if isinstance(config, dict):
        return Config(_schedsim.Scenario.from_dict(config, overrides, seed))
    if isinstance(config, os.PathLike):
        return Config(_schedsim.Scenario.from_file(os.fspath(config), overrides, seed))
    if isinstance(config, str):
        if not os.path.exists(config) and _looks_like_yaml(config):
            return Config(_schedsim.Scenario.from_string(config, "<string>", overrides, seed))
        return Config(_schedsim.Scenario.from_file(config, overrides, seed))
    raise TypeError(
        "config: expected None, a path (str or os.PathLike), YAML text, a dict or a schedsim.Config, "
        f"got {type(config).__name__}"
    )


def _scenario_dirs():
    """Where the shipped scenarios are: a checkout's experiments/configs first (run from
    the source tree or an editable install), then the package's copies. Their data
    paths ($SCHEDSIM_DATA/...) resolve under the SCHEDSIM_DATA folder, as in the CLI."""
    from . import __path__ as package_path

    dirs = [os.path.normpath(os.path.join(p, os.pardir, os.pardir, "experiments", "configs")) for p in package_path]
    dirs += [os.path.join(p, "scenarios") for p in package_path]
    out = []
    for d in dirs:
        if os.path.isdir(d) and d not in out:
            out.append(d)
    return out


def scenarios():
    """Names of the scenarios shipped with schedsim (experiments/configs)."""
    names = set()
    for d in _scenario_dirs():
        names.update(f[:-5] for f in os.listdir(d) if f.endswith(".yaml"))
    return sorted(names)


def scenario_path(name):
    """The YAML file of a shipped scenario."""
    for d in _scenario_dirs():
        p = os.path.join(d, name + ".yaml")
        if os.path.exists(p):
            return p
    raise ValueError(f"scenario: expected one of {', '.join(scenarios())}, got {name!r}")
