"""NVML's failures as envcheck names them: one name per return code, and which mean "no driver".

The NVML child (envcheck.probes.nvml_child), the facts model, the check and the healthcheck
all read these names; they live here, below all of them, with nothing but the standard
library, so that the healthcheck can tell "no driver here" without loading the facts model.
"""

from __future__ import annotations

from types import ModuleType

TYPE_CHECKING = False  # not typing's own: no module a healthcheck loads imports typing
if TYPE_CHECKING:
    from typing import Dict, Tuple

# NVML errors that mean no NVIDIA driver is here (no library, no kernel module); any other
# error (a crash, a hang, a refusal, a lost GPU) says nothing of whether GPUs are here
NVML_NO_DRIVER = frozenset({"library_not_found", "driver_not_loaded"})


def error_names(nvml: ModuleType) -> Dict[int, str]:
    """NVML return code -> lower-case name, from the binding's own constants."""
    return {
        getattr(nvml, n): n[len("NVML_ERROR_") :].lower()
        for n in dir(nvml)
        if n.startswith("NVML_ERROR_") and isinstance(getattr(nvml, n), int)
    }


def describe(nvml: ModuleType, names: Dict[int, str], exc: BaseException) -> Tuple[str, str]:
    """(code name, message) of an exception an NVML call raised."""
    if isinstance(exc, nvml.NVMLError):
        code = getattr(exc, "value", None)
        return names.get(code, f"error_{code}") if isinstance(code, int) else "unknown", text(exc)
    return "unknown", f"{type(exc).__name__}: {exc}"


def text(value: object) -> str:
    """NVML's strings come as bytes from older bindings, str from newer ones."""
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
