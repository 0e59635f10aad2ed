"""Facts a report shows without a label: a GPU or an OS named in a sentence, the paths and
wheel tags that give the OS away, the package manager whose command or error is pasted,
pip's own words about what is installed, and a library's banner.

Each kind of mention is taken only when the text mentions one value of it ("an RTX 2080 Ti"
in one sentence and "my old GTX 1060" in the next name no GPU: the reader never chooses),
and always after the readers of tools' output and of labelled facts, so it never overrides
what they read.
"""

from __future__ import annotations

import re
from itertools import islice
from typing import Dict, List, Optional, Set, Tuple

from .._patterns import compile_on_use
from ..facts import GpuFacts, PackageFacts
from .dumps import platform_list
from .gpu_names import gpu_name
from .into_facts import put
from .reading import Reading, lines_of, lowered
from .scanning import first, scan

WHERE = "mentions"

_GPU_MENTION = compile_on_use(
    r"(?<![\w-])((?:NVIDIA\s+)?(?:(?:GeForce\s+)?(?:RTX|GTX)\s?\d{3,4}(?:\s?Ti|\s?SUPER)?"
    r"|GeForce\s\d{3}MX"
    r"|Tesla\s+[KMPVTA]\d{1,3}[a-zA-Z]?|TITAN\s(?:Xp|X|V|RTX)"
    r"|A100|H100|H200|V100|A10G|L40S|A6000|A40|A30|L4|T4|P100|P40|K80|GB200|B200|GH200)"
    r"(?:\s(?:Laptop|Mobile)(?:\sGPU)?)?)(?![\w-])",
    re.IGNORECASE,
)
_OS_MENTION = compile_on_use(
    r"(?<![A-Za-z0-9_/.-])(ubuntu\s?\d{2}(?:\.\d{2})?|debian\s?\d{1,2}|centos\s?\d|fedora\s?\d{2}"
    r"|windows?\s?(?:version\s)?(?:10|11|7|8\.1)|win\s?(?:10|11)"
    r"|mac\s?os\s?x?\s?\d{2}(?:\.\d{1,2}){0,2}"
    r"|osx\s?\d{2}(?:\.\d{1,2})?|macos\s?\d{2}(?:\.\d{1,2}){0,2})(?![A-Za-z0-9_.]*\d)",
    re.IGNORECASE,
)
_COUNT_BEFORE = compile_on_use(r"(?<![\w.])(\d{1,2})\s?(?:x\s?)?$")  # "4 A100", "2x RTX 4090"
# words one of which each kind of mention needs (a cheap test of the lower-cased text first:
# a long training log holds none of them, and the patterns are not scanned over it)
_GPU_WORDS = ("rtx", "gtx", "tesla", "titan", "a100", "h100", "h200", "v100", "a10g", "l40s",
              "a6000", "a40", "a30", "l4", "t4", "p100", "p40", "k80", "b200", "gh200",
              "geforce")  # fmt: skip
_OS_WORDS = ("ubuntu", "debian", "centos", "fedora", "win", "mac", "osx", "linux", "apple",
             "m1 ", "m2 ", "m3 ", "m4 ", "m5 ")  # fmt: skip
# an OS named without its release ("on my MacBook", "(Windows)", "ubuntu"); Apple silicon
_OS_WORD = compile_on_use(
    r"(?<![A-Za-z0-9_/.-])(windows|macbooks?|macs?|macos|osx|ubuntu|centos|debian|fedora|linux"
    r"|apple silicon|m[1-5] (?:mac|macbook|chip|pro|max|ultra))(?![A-Za-z0-9_-])",
    re.IGNORECASE,
)
_APPLE_SILICON = compile_on_use(
    r"\bapple silicon\b|\bM[1-5](?: (?:Pro|Max|Ultra))?\b(?= ?(?:mac|macbook|chip|pro|max|ultra|\)|,))"
    r"|\b(?:mac|macbook)(?: (?:pro|air))? (?:with )?(?:an )?M[1-5]\b",
    re.IGNORECASE,
)
# an NVIDIA Jetson board named by its model, or the JetPack / L4T release only a Jetson runs
_JETSON = compile_on_use(
    r"\b(?:jetson\s(?:agx\s|orin\s)?(?:nano|tx1|tx2|xavier(?:\snx)?|orin(?:\snano|\snx)?)"
    r"|agx\s(?:xavier|orin)|jetpack\s?\d(?:\.\d{1,2}){0,2}|l4t\s?r?\d{2}\.\d)\b",
    re.IGNORECASE,
)
# the architecture said of the machine in a sentence: "an aarch64 machine", "my x86_64 server"
_ARCH_OF = compile_on_use(
    r"\b(?:an?|my|our|this|the)\s(aarch64|arm64|x86[_-]64)\s"
    r"(?:machine|server|system|host|node|box|instance|board|cpu|linux)\b",
    re.IGNORECASE,
)
_X86_MAC = compile_on_use(r"\bmacosx_\d{1,2}_\d{1,2}_x86_64\b")
# an Intel Mac said in words: "an Intel Mac", "MacBook Pro (Intel)", "mac系统intel架构"
_INTEL_MAC = compile_on_use(
    r"\bintel(?:[- ]based)?\s(?:mac|macbook|imac|mac\smini)(?:\s(?:pro|air))?s?\b"
    r"|\b(?:mac|macbook|imac)(?:\s(?:pro|air|mini))?\s?\((?:intel|x86_64)\)"
    r"|(?<![A-Za-z])mac(?:os)?\s?(?:系统|系統)?\s?的?\s?intel\s?(?:架构|架構|芯片|晶片|处理器|處理器|cpu)"
    r"|(?<![A-Za-z])intel\s?(?:架构|架構|芯片|晶片)的?\s?(?:mac|macbook|苹果|蘋果)",
    re.IGNORECASE,
)
_WSL = compile_on_use(r"\bWSL\s?[12]?\b|Windows Subsystem for Linux|microsoft-standard-WSL")
# paths and tags that only one OS has
_OS_SIGNS = (
    (
        "Windows",
        (":\\", "winerror", "win_amd64", ".dll", ".exe"),
        compile_on_use(r"(?<![\w])[A-Za-z]:\\|\bWinError\b|\bwin_amd64\b|\.dll\b|\.exe\b"),
    ),
    (
        "Darwin",
        ("/users/", "macosx_", "/opt/homebrew/", ".dylib", "/library/"),
        compile_on_use(r"/Users/\w|\bmacosx_\d|/opt/homebrew/|\.dylib\b|/Library/Frameworks/"),
    ),
    (
        "Linux",
        ("/home/", "/usr/", "manylinux", "linux-gnu", "/opt/conda/", ".so", "/dev/shm", "apt"),
        compile_on_use(
            r"(?<![\w.])/home/\w|/usr/(?:local/)?lib/|\bmanylinux|linux-gnu\b|/opt/conda/|\.so(?:\.\d+)*\b"
            r"|/dev/shm\b|\bapt(?:-get)? install\b"
        ),
    ),
)
_MANAGER_SIGNS = (
    (
        "uv",
        ("uv ", "no solution found", "because"),
        compile_on_use(
            r"\b(?i:uv) (?i:pip install|add|sync|lock|run|venv)\b|\u00d7 No solution found|╰─▶ Because"
        ),
    ),
    (
        "poetry",
        ("poetry", "solverproblemerror"),
        compile_on_use(r"\b(?i:poetry)\b|SolverProblemError"),
    ),
    ("pdm", ("pdm ",), compile_on_use(r"\bpdm (?:add|install|lock)\b")),
    ("pipenv", ("pipenv ",), compile_on_use(r"\bpipenv (?:install|lock)\b")),
    (
        "mamba",
        ("mamba",),
        compile_on_use(r"\b(?:micro)?mamba (?:install|create|env)\b"),
    ),
    (
        "conda",
        ("conda ", "packagesnotfounderror", "unsatisfiableerror", "solving environment"),
        compile_on_use(  # LibMambaUnsatisfiableError: conda's libmamba solver, not mamba
            r"\bconda (?:install|create|env (?:create|update))\b|PackagesNotFoundError"
            r"|UnsatisfiableError|Solving environment: failed"
        ),
    ),
    (
        "pip",
        (
            "pip",
            "could not find a version",
            "no matching distribution",
            "successfully installed",
            "requirement already",
            "supported wheel",
            "conflicting dependencies",
            "which is incompatible",
        ),
        compile_on_use(  # pip's commands, and its own words (its resolver's included)
            r"(?<!uv )\bpip3? install\b|-m pip install\b|ERROR: (?:Could not find a version|No matching distribution)"
            r"|Successfully installed |Requirement already satisfied"
            r"|is not a supported wheel on this platform|because these package versions have conflicting"
            r"|(?<![A-Za-z])pip\s?(?:仓库|倉庫|源)"  # "pip's repository / source" in Chinese
            r"|requires [\w.-]{1,40}[<>=!~]=?[^,\n]{1,30}, but you have [\w.-]{1,40} \S{1,30} which is incompatible"
        ),
    ),
)
_ALREADY = compile_on_use(
    r"Requirement already satisfied: ([A-Za-z][\w.-]{0,40}) in \S{1,300}(?: \(from [^)\n]{1,200}\))?"
    r" \((\d{1,3}\.\d{1,4}(?:\.\d{1,4})?(?:[a-z]+\d*)?(?:\+[\w.]{1,20})?)\)"
)
_INSTALLED = compile_on_use(
    r"Successfully installed[\s*]{1,4}((?:[A-Za-z][\w.-]{0,60}-\d[\w.+]{0,30}[\s*]{0,4}){1,80})"
)
_BANNER = compile_on_use(  # Ultralytics: "Ultralytics YOLOv8.0.53 Python-3.9.1 torch-1.8.1+cu111 CUDA:0 (NVIDIA GeForce RTX 3070, 8192MiB)"
    r"Python-(3\.\d{1,2}\.\d{1,2}) torch-(\d{1,2}\.\d{1,2}\.\d{1,2}(?:\+\w{1,12})?)"
    r"(?: CUDA:\d{1,2} \(([^,()\n]{2,60}), \d{1,7}MiB\))?"
)
# a torch version with its build label ("2.0.0+cpu Autocast half" in a web UI's system info):
# only torch and torchaudio (whose version is torch's since 2.0) carry 1.x/2.x with a label;
# never a requirement (==) or a wheel's name (torch-2.1.0+cu118-cp310-...)
_LOCAL_TORCH = compile_on_use(
    r"(?<![\w.=<>~-])([12]\.\d{1,2}\.\d{1,2}\+(?:cpu|cu\d{2,3}|rocm\d{1,2}(?:\.\d{1,2}){1,2}))(?![\w.-])"
)
_WATCHED = ("torch", "torchvision", "torchaudio", "xformers", "triton", "flash-attn", "flash_attn")


def read_mentions(text: str, reading: Reading) -> None:
    """The facts the text mentions once, into the reading where nothing else put them."""
    lines = lines_of(text)
    before = len(reading.where)
    _pip_words(lines, reading)
    _banner(lines, reading)
    if "+c" in text or "+rocm" in text:
        labelled = [m.group(1) for m in islice(scan(_LOCAL_TORCH, text, 1 << 20), 50)]
        _one(reading, "torch.version", labelled)
    counts: List[int] = []
    _one(reading, "gpu", _gpus(text, counts))
    gpus = reading.facts.nvidia.gpus
    if len(set(counts)) == 1 and len(gpus) == 1 and reading.where.get("nvidia.gpus") == WHERE:
        gpus.extend(GpuFacts(index=i, name=gpus[0].name) for i in range(1, counts[0]))
    _os(text, reading)
    _jetson(text, reading)
    if "64 " in text:
        arches = [m.group(1).lower().replace("-", "_") for m in scan(_ARCH_OF, text, 1 << 20)]
        _one(reading, "system.machine", arches[:50])
    if first(_WSL, text):
        reading.extra["wsl"] = True
    low = lowered(text)
    managers = {name for name, words, sign in _MANAGER_SIGNS if _signs(low, words, sign, text)}
    manager = _manager(managers)
    if manager:
        reading.extra.setdefault("stated", {}).setdefault("package_manager", manager)
    if len(reading.where) > before and WHERE not in reading.pieces:
        reading.pieces.append(WHERE)


def _manager(shown: Set[str]) -> Optional[str]:
    """The package manager of the environment, of those whose commands or words the text
    shows: pip runs inside every other one's environment (a conda env, uv's venv) and mamba
    is a solver for conda's, so the most particular one is the environment's; two
    particular ones (uv and poetry) name none."""
    if len(shown) > 1:
        shown = shown - {"pip"}
    if len(shown) > 1:
        shown = shown - {"conda"}
    return next(iter(shown)) if len(shown) == 1 else None


def _one(reading: Reading, key: str, values: List[str]) -> None:
    distinct: List[str] = []
    for value in values:
        if not any(value.lower() == d.lower() for d in distinct):
            distinct.append(value)
    if len(distinct) == 1 and put(key, distinct[0], reading):
        reading.where.setdefault("nvidia.gpus" if key == "gpu" else key, WHERE)


def _gpus(text: str, counts: List[int]) -> List[str]:
    found: List[str] = []
    if not any(w in lowered(text) for w in _GPU_WORDS):
        return found
    for match in scan(_GPU_MENTION, text, 1 << 20):
        name = gpu_name(re.sub(r"\s+", " ", match.group(1)))
        if name:
            found.append(name)
            count = _COUNT_BEFORE.search(text, max(0, match.start() - 6), match.start())
            if count and 1 < int(count.group(1)) <= 16:
                counts.append(int(count.group(1)))
        if len(found) > 50:
            break
    return found


def _signs(low: str, words: Tuple[str, ...], sign: re.Pattern[str], text: str) -> bool:
    """Whether the text shows the sign: one of its words, then its pattern."""
    return any(w in low for w in words) and first(sign, text) is not None


def _os(text: str, reading: Reading) -> None:
    """An OS named with its release ("on Windows 10", "ubuntu 18.04"), else the OS that the
    paths and tags show, when only one OS is named or shown."""
    words = any(w in lowered(text) for w in _OS_WORDS)
    named = [m.group(1) for m in islice(scan(_OS_MENTION, text, 1 << 20), 50)] if words else []
    families = {_family(n) for n in named}
    # an Intel Mac in words (and no Apple silicon besides: that would be two machines)
    intel_said = "intel" in lowered(text) and first(_INTEL_MAC, text) is not None
    intel_mac = intel_said and not first(_APPLE_SILICON, text)
    if len(families) == 1:
        _one(reading, "system.os", [_spelled(n) for n in named][:1])
        if intel_mac and families == {"Darwin"}:
            _x86_64_mac(reading)
        return
    if families:
        return
    intel = "x86_64" in text and first(_X86_MAC, text) is not None
    if "platform" in text:  # uv's and pip's lists of the platforms that have wheels
        text = "\n".join(line for line in lines_of(text) if not platform_list(line))
    low = lowered(text)
    shown = {family for family, words, sign in _OS_SIGNS if _signs(low, words, sign, text)}
    if any(w in low for w in _OS_WORDS):
        shown |= {_family(w.group(1)) for w in scan(_OS_WORD, text, 1 << 20)}
    if shown <= {"Darwin"} and first(_APPLE_SILICON, text):
        shown = {"Darwin"}
        if not reading.facts.system.machine and not intel and not intel_said:
            # the hardware; a Python under Rosetta is x86_64, and a text that shows an
            # x86_64 macOS tag (or says an Intel Mac) besides says two machines
            reading.facts.system.machine = "arm64"
            reading.where.setdefault("system.machine", f"{WHERE} (Apple silicon)")
    if intel_mac and shown <= {"Darwin"}:
        shown = {"Darwin"}
        _x86_64_mac(reading)
    if len(shown) == 1 and not reading.facts.system.os:
        reading.facts.system.os = next(iter(shown))
        reading.observed.add("system")
        reading.where.setdefault("system.os", f"{WHERE} (its paths)")


def _x86_64_mac(reading: Reading) -> None:
    """The reporter's words say an Intel Mac: the machine is x86_64 unless a reader took it."""
    if not reading.facts.system.machine:
        reading.facts.system.machine = "x86_64"
        reading.where.setdefault("system.machine", f"{WHERE} (an Intel Mac)")


def _jetson(text: str, reading: Reading) -> None:
    """A Jetson the text names ("my jetson nano", "AGX XAVIER", "JetPack 4.4"): a Linux
    aarch64 board whose CUDA is JetPack's (checks.jetson says which torch fits it)."""
    low = lowered(text)
    if "jetson" not in low and "agx" not in low and "jetpack" not in low and "l4t" not in low:
        return
    named = _JETSON.search(text[: 1 << 20])
    s = reading.facts.system
    if named is None or s.jetson or s.os not in ("", "Linux") or s.machine not in ("", "aarch64"):
        return  # another OS or architecture read: not a Jetson's report, or two machines
    s.jetson, s.os, s.machine = named.group(0), "Linux", "aarch64"
    reading.observed.add("system")
    reading.where.setdefault("system.jetson", f"{WHERE} (a Jetson board)")


def _family(name: str) -> str:
    low = name.lower()
    if low.startswith("win"):
        return "Windows"
    if low.startswith(("mac", "osx", "apple", "m1", "m2", "m3", "m4", "m5")):
        return "Darwin"
    return "Linux"


def _spelled(name: str) -> str:
    """ "window10" -> "Windows 10", "osx 14.5" -> "macOS 14.5"."""
    release = re.search(r"\d{1,2}(?:\.\d{1,2}){0,2}", name)
    number = release.group(0) if release else ""
    family = _family(name)
    if family == "Windows":
        return f"Windows {number}".strip()
    if family == "Darwin":
        return f"macOS {number}".strip()
    word = re.match(r"[A-Za-z]+", name)
    return f"{(word.group(0) if word else name).capitalize()} {number}".strip()


def _pip_words(lines: List[str], reading: Reading) -> None:
    """What pip says is installed: "Requirement already satisfied: torch in ... (2.0.1)",
    "Successfully installed torch-2.1.2 ..." (the last install wins: it is what is there)."""
    versions: Dict[str, str] = {}
    for line in lines:
        if "Requirement already" not in line and "Successfully installed" not in line:
            continue
        have = _ALREADY.search(line)
        if have:
            versions[have.group(1).lower().replace("_", "-")] = have.group(2)
        done = _INSTALLED.search(line)
        if done:
            for item in done.group(1).replace("*", " ").split():
                name, _, version = item.rpartition("-")
                if name and re.match(r"\d", version):
                    versions[name.lower().replace("_", "-")] = version
    for name, version in versions.items():
        if name == "torch":
            if put("torch.version", version, reading):
                reading.where.setdefault("torch.version", "pip's own words")
        elif name in _WATCHED:
            t = reading.facts.torch
            if not any(p.name.replace("_", "-") == name for p in t.companions):
                t.companions.append(PackageFacts(name, version))


def _banner(lines: List[str], reading: Reading) -> None:
    """A library's banner (Ultralytics'): the last one the text shows. A library prints it
    at each start, so a log (or a report's "it worked with ..., now ...") runs from the
    old setup to the present one."""
    banners = [m for m in (_BANNER.search(line) for line in lines if "Python-" in line) if m]
    for match in banners[-1:]:
        put("python.version", match.group(1), reading)
        put("torch.version", match.group(2), reading)
        if match.group(3):
            put("gpu", match.group(3), reading)
        reading.where.setdefault("torch.version", "a library's banner")
