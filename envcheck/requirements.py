"""What a project needs from a machine: `[tool.envcheck]` in its pyproject.toml (or an
envcheck.toml), and `envcheck.require(...)` for the first line of a training script.

    [tool.envcheck]
    torch = ">=2.4"              # specifier for the installed torch
    python = ">=3.10"
    cuda = "12.1"                # minimum CUDA of the torch build
    gpus = 2                     # minimum number of GPUs torch can use
    gpu_memory = "40GiB"         # minimum memory per GPU
    compute_capability = "8.0"   # minimum for every GPU
    dtypes = ["bf16"]            # bf16, fp16, tf32 (or bf16 = true, fp16 = true, tf32 = true)
    backend = "nccl"             # required torch.distributed backend
    smoke = ["matmul", "all_reduce"]   # smoke tests `envcheck check` runs (true: all)
    ignore = ["INS004"]          # finding codes to drop

The keys are the keywords of ``envcheck.require()`` (envcheck.core.script): one list
(CONFIG_KEYS), so a key the README names works in both places.

Each unmet requirement is an error finding (REQ001-REQ008) with its fix.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple, Union

from ._cwd import current as current_folder
from ._record import field, record
from ._text import size as fmt_size
from ._toml import ConfigError, Unreadable, read_toml
from .compat import gpu_capabilities
from .facts import Facts, RuntimeStatus
from .findings import Finding
from .requirement_values import cuda_version, gpu_memory, kind, specifier
from .rules import RULES  # REQ001-REQ008 live in the one registry
from .tables.model import capability_key, parse_version
from .values import ComputeCapability

if TYPE_CHECKING:  # packaging's parsers load when a project pins something
    from packaging.specifiers import SpecifierSet
    from packaging.version import Version

AMPERE = ComputeCapability(8, 0)  # bf16 and tf32 need compute capability 8.0 or newer

SMOKE_TESTS = ("matmul", "amp", "all_reduce", "memory", "compile")
DTYPES = ("bf16", "fp16", "tf32")


class RequirementError(RuntimeError):
    """Raised by envcheck.require(): lists every unmet requirement, one per line."""

    def __init__(self, findings: List[Finding]) -> None:
        """``findings``: the unmet requirements (REQ*) and the root causes they follow
        from. Only the requirements are counted; a root cause is shown under each
        requirement that follows from it."""
        self.findings = findings
        unmet = [f for f in findings if f.code.startswith("REQ")]
        causes = {f.code: f for f in findings if not f.code.startswith("REQ")}
        lines = [f"this machine does not meet {len(unmet)} requirement(s):"]
        for f in unmet:
            lines.append(f"  - {f.code} {f.title}" + (f" (fix: {f.fix})" if f.fix else ""))
            cause = causes.get(f.caused_by or "")
            if cause is not None:
                lines.append(
                    f"      because {cause.code} {cause.title}"
                    + (f" (fix: {cause.fix})" if cause.fix else "")
                )
        super().__init__("\n".join(lines))


@record
class Requirements:
    torch: Optional[SpecifierSet] = None
    python: Optional[SpecifierSet] = None
    cuda: Optional[Version] = None
    gpus: Optional[int] = None
    gpu_memory: Optional[int] = None
    compute_capability: Optional[str] = None
    dtypes: List[str] = field(default_factory=list)
    backend: Optional[str] = None
    smoke: List[str] = field(default_factory=list)
    ignore: List[str] = field(default_factory=list)
    source: Optional[str] = None  # the file, or "envcheck.require()"

    @property
    def needs_deep(self) -> bool:
        """bf16 support and distributed backends are only known after importing torch."""
        return bool(self.dtypes or self.backend or self.gpus)


# The keys of [tool.envcheck], and the keywords of envcheck.require() (envcheck.core.script):
# one list, so a key the README names works in both places (a test holds the two together).
_VERSION_KEYS = ("torch", "python", "cuda")
_MACHINE_KEYS = ("gpus", "gpu_memory", "compute_capability", "dtypes", "bf16", "fp16", "tf32")
# The keys of [tool.envcheck]: the keywords of ``envcheck.require`` (tests/test_cli_options.py), so
# ``bf16 = true`` works wherever ``bf16=True`` does.
CONFIG_KEYS: Tuple[str, ...] = (*_VERSION_KEYS, *_MACHINE_KEYS, "backend", "smoke", "ignore")


def _unknown_keys(raw: Dict[str, Any], where: str) -> None:
    """Every unknown key at once, each with the known key it most looks like (difflib), so
    one run shows every typo."""
    import difflib

    known = CONFIG_KEYS
    unknown = [str(k) for k in raw if k not in known]
    if not unknown:
        return
    said = []
    for key in unknown:
        near = difflib.get_close_matches(key, known, n=1)
        said.append(f"{key!r}" + (f" (did you mean {near[0]!r}?)" if near else ""))
    raise ConfigError(
        f"{where}: unknown key{'s' if len(said) > 1 else ''} {', '.join(said)}; "
        f"known: {', '.join(sorted(known))}"
    )


def parse_requirements(raw: Dict[str, Any], where: str) -> Requirements:
    """Validate a [tool.envcheck] table; unknown keys and bad values are ConfigErrors."""
    req = Requirements(source=where)
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: [tool.envcheck] must be a table, not {kind(raw)}")
    _unknown_keys(raw, where)
    for dtype in DTYPES:  # bf16 = true: the short way to write dtypes = ["bf16"]
        if dtype in raw and not isinstance(raw[dtype], bool):
            raise ConfigError(
                f"{where}: {dtype} = {raw[dtype]!r} must be true or false, not {kind(raw[dtype])}"
            )
    if "torch" in raw:
        req.torch = specifier(raw["torch"], "torch", where)
    if "python" in raw:
        req.python = specifier(raw["python"], "python", where)
    if "cuda" in raw:
        req.cuda = cuda_version(raw["cuda"], where)
    if "gpus" in raw:
        if not isinstance(raw["gpus"], int) or isinstance(raw["gpus"], bool) or raw["gpus"] < 0:
            raise ConfigError(f"{where}: gpus = {raw['gpus']!r} is not a whole number")
        req.gpus = raw["gpus"]
    if "gpu_memory" in raw:
        req.gpu_memory = gpu_memory(raw["gpu_memory"], where)
    if "compute_capability" in raw:
        if isinstance(raw["compute_capability"], (bool, list, dict)):
            raise ConfigError(
                f"{where}: compute_capability must be a string like '8.0', "
                f"not {kind(raw['compute_capability'])}"
            )
        cc = str(raw["compute_capability"])
        try:
            capability_key(cc)
        except ValueError:
            raise ConfigError(f"{where}: compute_capability = {cc!r} is not like '8.0'") from None
        req.compute_capability = cc
    for key, allowed in (("dtypes", DTYPES), ("smoke", SMOKE_TESTS)):
        value = raw.get(key, [])
        if value is True:
            value = list(SMOKE_TESTS[:3]) if key == "smoke" else value
        if not isinstance(value, list) or any(v not in allowed for v in value):
            raise ConfigError(f"{where}: {key} = {value!r}: a list of {', '.join(allowed)}")
        setattr(req, key, list(value))
    req.dtypes += [d for d in DTYPES if raw.get(d) is True and d not in req.dtypes]
    if "backend" in raw:
        if raw["backend"] not in ("nccl", "gloo", "mpi", "ucc", "xccl"):
            raise ConfigError(
                f"{where}: backend = {raw['backend']!r}: nccl, gloo, mpi, ucc or xccl"
            )
        req.backend = raw["backend"]
    ignore = raw.get("ignore", [])
    if not isinstance(ignore, list) or not all(isinstance(c, str) for c in ignore):
        raise ConfigError(f"{where}: ignore must be a list of finding codes")
    req.ignore = list(ignore)
    return req


def _envcheck_table(data: Dict[str, Any], whole: bool) -> Any:
    """[tool.envcheck] of a document; with ``whole`` (envcheck.toml) the document itself
    when it has none. None when there is none."""
    tool = data.get("tool")
    if isinstance(tool, dict) and "envcheck" in tool:
        return tool["envcheck"]
    return data if whole else None


def find_config(start: Optional[Union[str, Path]] = None) -> Optional[Tuple[Path, Dict[str, Any]]]:
    """envcheck.toml, or a pyproject.toml with [tool.envcheck], from ``start`` upwards."""
    here = start or current_folder()
    if here is None:  # the current folder was deleted under us: there is nothing to search
        return None
    try:
        folder = Path(here).resolve()
    except OSError:
        return None
    for candidate in (folder, *folder.parents):
        own = candidate / "envcheck.toml"
        if own.is_file():
            return own, _envcheck_table(read_toml(own), whole=True)
        project = candidate / "pyproject.toml"
        if project.is_file():
            try:
                data = read_toml(project)
            except Unreadable as exc:
                # Another tool's pyproject.toml that is not UTF-8 or not TOML. One that never
                # spells "envcheck" holds no [tool.envcheck] (short of a \u escape in a quoted
                # key), so it is not ours to refuse: look further up, as for any pyproject
                # without our table. One that does may hold requirements we cannot read, and
                # passing without them would be a lie: a ConfigError naming the file.
                if exc.mentions_envcheck:
                    raise
                continue
            table = _envcheck_table(data, whole=False)
            if table is not None:
                return project, table
    return None


def load_requirements(
    config: Optional[str] = None, start: Optional[str] = None
) -> Optional[Requirements]:
    """From ``--config FILE``, or found from the current folder upwards; None when absent."""
    if config:
        path = Path(config)
        table = _envcheck_table(read_toml(path), whole=path.name != "pyproject.toml")
        if table is None:
            raise ConfigError(f"{path}: no [tool.envcheck] table")
        if not isinstance(table, dict):
            raise ConfigError(f"{path}: [tool.envcheck] must be a table, not {kind(table)}")
        return parse_requirements(table, str(path))
    found = find_config(start)
    if found is None:
        return None
    path, table = found
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.envcheck] must be a table, not {kind(table)}")
    return parse_requirements(table, str(path))


# --------------------------------------------------------------------------- evaluation


def _gpu_count(facts: Facts) -> Tuple[int, str]:
    """The GPUs torch can use: torch's own count; none for a CPU build; else the driver's."""
    rt = facts.torch_runtime
    t = facts.torch
    if rt.status == RuntimeStatus.OK and rt.device_count is not None and (t.cuda or t.hip):
        return rt.device_count, "torch.cuda.device_count()"
    if t.installed and t.version and not (t.cuda or t.hip):
        gpus = len(facts.nvidia.gpus)
        return 0, f"torch {t.version} is neither a CUDA nor a ROCm build; the driver sees {gpus}"
    return len(facts.nvidia.gpus), "NVML"


def evaluate(req: Requirements, facts: Facts) -> List[Finding]:
    """Every unmet requirement as an error finding, in the order of the keys."""
    where = f"required by {req.source}" if req.source else "required"
    out: List[Finding] = []
    for unmet in (
        _torch_unmet,
        _python_unmet,
        _cuda_unmet,
        _gpus_unmet,
        _gpu_memory_unmet,
        _capability_unmet,
        _dtypes_unmet,
        _backend_unmet,
    ):
        out += unmet(req, facts, where)
    return out


def _torch_unmet(req: Requirements, facts: Facts, where: str) -> List[Finding]:
    t = facts.torch
    version = parse_version(t.version) if t.installed else None
    if req.torch is None or (version is not None and req.torch.contains(version, prereleases=True)):
        return []
    have = f"torch {t.version}" if t.installed else "no torch"
    return [
        RULES["REQ001"](
            f"{have}; torch{req.torch} is {where}",
            [have],
            # --keep: the nearest that satisfies it, the report's one plan (core._plan)
            f"Install the torch nearest to this one that satisfies torch{req.torch}: "
            f"`envcheck install --keep --torch '{req.torch}'` gives the command.",
        )
    ]


def _python_unmet(req: Requirements, facts: Facts, where: str) -> List[Finding]:
    py = parse_version(facts.python.version)
    if req.python is None or (py is not None and req.python.contains(py, prereleases=True)):
        return []
    return [
        RULES["REQ002"](
            f"Python {facts.python.version}; Python{req.python} is {where}",
            [facts.python.executable],
            f"Use a Python{req.python} environment.",
        )
    ]


def _cuda_unmet(req: Requirements, facts: Facts, where: str) -> List[Finding]:
    t = facts.torch
    if req.cuda is None:
        return []
    cuda = parse_version(t.cuda)
    if cuda is not None and cuda >= req.cuda:
        return []
    have = f"CUDA {t.cuda}" if cuda else "a build without CUDA"
    return [
        RULES["REQ003"](
            f"torch {t.version or ''} is {have}; CUDA >= {req.cuda} is {where}".replace("  ", " "),
            [f"torch {t.version}"],
            f"Install a torch build for CUDA {req.cuda} or newer (`envcheck install` picks one).",
        )
    ]


def _gpus_unmet(req: Requirements, facts: Facts, where: str) -> List[Finding]:
    count, how = _gpu_count(facts)
    if req.gpus is None or count >= req.gpus:
        return []
    visible = facts.environment.get("CUDA_VISIBLE_DEVICES")
    shown = [f"CUDA_VISIBLE_DEVICES={visible}"] if visible is not None else []
    return [
        RULES["REQ004"](
            f"{count} GPU(s) here; {req.gpus} {where}",
            [f"{count} GPU(s) ({how})", *shown],
            "Run on a machine (or container: --gpus) with enough GPUs, "
            "and check CUDA_VISIBLE_DEVICES.",
        )
    ]


def _gpu_memory_unmet(req: Requirements, facts: Facts, where: str) -> List[Finding]:
    if req.gpu_memory is not None and _no_gpu_seen(facts):  # none to have it
        return _no_gpu("REQ005", f"{fmt_size(req.gpu_memory)} per GPU", where)
    return [
        RULES["REQ005"](
            f"GPU {gpu.index} ({gpu.name}) has {fmt_size(gpu.memory_total)}; "
            f"{fmt_size(req.gpu_memory)} per GPU is {where}",
            [f"GPU {gpu.index}"],
            "Use GPUs with more memory, or reduce the model's memory needs.",
        )
        for gpu in facts.nvidia.gpus
        if req.gpu_memory is not None
        and gpu.memory_total is not None
        and gpu.memory_total < req.gpu_memory
    ]


def _no_gpu_seen(facts: Facts) -> bool:  # by NVML's, ROCm's or torch's own count (Jetson)
    return not (facts.nvidia.gpus or facts.amd.gpus or facts.torch_runtime.device_count)


def _no_gpu(code: str, needed: str, where: str) -> List[Finding]:
    fix = "Run on a machine (or container: --gpus) with such GPUs."
    return [RULES[code](f"no GPU here; {needed} is {where}", ["no GPU"], fix)]


def _capability_unmet(req: Requirements, facts: Facts, where: str) -> List[Finding]:
    least = req.compute_capability
    if least is None:
        return []
    caps = gpu_capabilities(facts)
    if not caps and _no_gpu_seen(facts):  # no GPU meets it: never passed for want of one
        return _no_gpu("REQ006", f"compute capability {least}", where)
    return [
        RULES["REQ006"](
            f"{name} is compute capability {cc}; {least} is {where}",
            [f"{name}: {cc}"],
            "Use newer GPUs.",
        )
        for name, cc in caps
        if cc < capability_key(least)
    ]


def _dtypes_unmet(req: Requirements, facts: Facts, where: str) -> List[Finding]:
    caps = gpu_capabilities(facts)
    out = []
    for dtype in req.dtypes:
        missing = _dtype_missing(dtype, facts, caps)
        if missing:
            out.append(
                RULES["REQ007"](
                    f"{dtype} is {where}, but {missing}",
                    [f"dtype {dtype}"],
                    "Run on a machine with a CUDA GPU."
                    if not caps
                    else "bf16 and tf32 need Ampere (compute capability 8.0) or newer.",
                )
            )
    return out


def _backend_unmet(req: Requirements, facts: Facts, where: str) -> List[Finding]:
    if req.backend is None:
        return []
    backends, how = _backends(facts)
    if req.backend in backends:
        return []
    return [
        RULES["REQ008"](
            f"torch.distributed backend {req.backend} is {where}, but not available",
            [f"available ({how}): {', '.join(backends) or 'none'}"],
            "NCCL needs a CUDA build of torch on Linux; gloo comes with every build.",
        )
    ]


def _dtype_missing(
    dtype: str, facts: Facts, caps: List[Tuple[str, ComputeCapability]]
) -> Optional[str]:
    if not caps:
        return "there is no CUDA GPU"
    if dtype == "fp16":
        return None
    rt = facts.torch_runtime
    if dtype == "bf16" and rt.status == RuntimeStatus.OK and rt.bf16_supported is not None:
        return None if rt.bf16_supported else "torch.cuda.is_bf16_supported() is False"
    old = [f"{n} ({c})" for n, c in caps if c < AMPERE]
    return f"{', '.join(old)} predate Ampere" if old else None


def _backends(facts: Facts) -> Tuple[List[str], str]:
    rt = facts.torch_runtime
    if rt.status == RuntimeStatus.OK:
        return list(rt.distributed_backends), "torch.distributed"
    if not facts.torch.installed:
        return [], "torch is not installed"
    have = ["gloo"]
    if facts.torch.cuda and facts.system.os == "Linux":
        have.append("nccl")
    return have, "from the build, without importing torch"
