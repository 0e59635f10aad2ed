"""Describe the running interpreter: version, prefixes, sys.path, where torch is.

Imported by envcheck for its own interpreter, or run as a script (prints one
JSON object) for another one given with ``--python``. Standard library only, and
nothing here imports torch: ``find_spec`` only locates the package.
"""

import json
import struct
import sys
import sysconfig
from typing import Any, Dict, Tuple


def version_and_implementation() -> Tuple[str, str]:
    """platform's python_version() and python_implementation(), read as platform reads
    them where that is plain (CPython, PyPy): importing platform, which compiles a dozen
    regexes, cost a static check 3 ms. Any other interpreter asks platform itself."""
    name = {"cpython": "CPython", "pypy": "PyPy"}.get(sys.implementation.name)
    if name is None:
        import platform

        return platform.python_version(), platform.python_implementation()
    parts = sys.version.split(None, 1)[0].split(".")  # "3.13.0rc1", "3.11.7+"
    if len(parts) == 2:
        parts.append("0")  # as platform does
    return ".".join(parts), name


def snapshot() -> Dict[str, Any]:
    import importlib.util

    version, implementation = version_and_implementation()

    try:
        spec = importlib.util.find_spec("torch")
        torch_origin = spec.origin if spec is not None else None
        torch_locations = list(spec.submodule_search_locations or []) if spec else []
    except Exception:  # a broken finder must not take the probe down
        torch_origin, torch_locations = None, []
    return {
        "version": version,
        "implementation": implementation,
        "executable": sys.executable,
        "bits": struct.calcsize("P") * 8,
        "platform_tag": sysconfig.get_platform(),
        "prefix": sys.prefix,
        "base_prefix": getattr(sys, "base_prefix", sys.prefix),
        "stdlib": sysconfig.get_paths().get("stdlib"),
        "include": sysconfig.get_paths().get("include"),
        "sys_path": [p for p in sys.path if p],
        "torch_origin": torch_origin,
        "torch_locations": torch_locations,
    }


if __name__ == "__main__":
    del sys.path[0]  # this script's folder, not part of the environment being described
    sys.stdout.write(json.dumps(snapshot()))
