"""Hostile and GPU-pretending ``torch`` packages for the deep probe's child.

They are real packages written to a folder that goes first on PYTHONPATH, so
the deep probe's child imports them exactly as it would import torch: the
breakage happens in a real process, with real signals and real timeouts.
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Dict

BODIES: Dict[str, str] = {
    # What a CUDA wheel prints when its bundled cuDNN is shadowed or missing.
    "missing_cudnn": """
        raise OSError("libcudnn.so.9: cannot open shared object file: No such file or directory")
    """,
    "segfault": """
        import ctypes
        ctypes.string_at(0)
    """,
    "hang": """
        import time
        time.sleep(600)
    """,
    "hang_with_grandchild": """
        import os, subprocess, sys, time
        p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
        with open(os.environ["GRANDCHILD_PID_FILE"], "w") as fh:
            fh.write(str(p.pid))
        time.sleep(600)
    """,
    "hang_in_worker": """
        # Imports fine in the deep probe, then hangs (with a grandchild) in a smoke worker:
        # envcheck smoke gets as far as running its first test.
        import os, subprocess, sys, time
        if os.path.basename(sys.argv[0]) == "worker.py":
            p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
            with open(os.environ["GRANDCHILD_PID_FILE"], "w") as fh:
                fh.write(str(p.pid))
            time.sleep(600)
        __version__ = "2.8.0+cpu"
        from . import cuda, version, backends, distributed
        cuda.is_available = lambda: False
        def get_num_threads():
            return 4
    """,
    # The first process to import it hangs or exits (ONCE_DO=hang|exit, ONCE_FLAG: a file
    # path); every later one gets the real torch in its place: a smoke worker that dies on its
    # first test, and a new one that runs the rest.
    "once_then_real": """
        import importlib, os, sys, time
        if not os.path.exists(os.environ["ONCE_FLAG"]):
            open(os.environ["ONCE_FLAG"], "w").close()
            if os.environ["ONCE_DO"] == "hang":
                time.sleep(600)
            os._exit(3)
        _here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _here]
        del sys.modules["torch"]
        sys.modules["torch"] = importlib.import_module("torch")
    """,
    # The real torch, whose torch.distributed.init_process_group first notes the rank's pid
    # (RANK_PIDS: a file) and then, on the ranks RANK_FAULT names ("1:crash", "all:hang"),
    # hangs or dies of SIGSEGV: ranks forked from a smoke worker that has imported it.
    "rank_fault": """
        import importlib, os, signal, sys, time
        _here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _here]
        del sys.modules["torch"]
        sys.modules["torch"] = importlib.import_module("torch")
        _dist = importlib.import_module("torch.distributed")
        _init = _dist.init_process_group

        def _faulty(*args, **kwargs):
            with open(os.environ["RANK_PIDS"], "a") as fh:
                fh.write(f"{os.getpid()}\\n")
            who, what = os.environ["RANK_FAULT"].split(":")
            if who in ("all", os.environ["RANK"]):
                if what == "hang":
                    time.sleep(600)
                os.kill(os.getpid(), signal.SIGSEGV)
            return _init(*args, **kwargs)

        _dist.init_process_group = _faulty
    """,
    "exit": """
        import os
        os._exit(3)
    """,
    # Exits "successfully" in the middle of the import: no result, yet code 0.
    "exit0": """
        import os
        os._exit(0)
    """,
    "abort": """
        import os
        os.abort()
    """,
    # Writes to stdout without end (a library stuck in a logging loop).
    "flood": """
        import sys
        _block = ("torch: the same warning again " + "x" * 993 + "\\n") * 64
        while True:
            sys.stdout.write(_block)
    """,
    "noisy": """
        print("@@envcheck@@ not json at all")
        print("torch says hello on stdout", flush=True)
        __version__ = "2.8.0+cpu"
        __file__ = __file__
        from . import cuda, version, backends, distributed
        def get_num_threads():
            return 4
    """,
    "hang_in_cuda": """
        __version__ = "2.8.0+cu128"
        from . import cuda, version, backends
        def _hang():
            import time
            time.sleep(600)
        cuda.is_available = _hang
        def get_num_threads():
            return 4
    """,
    "old_driver": """
        __version__ = "2.8.0+cu128"
        from . import cuda, version, backends, distributed
        import warnings
        def _unavailable():
            warnings.warn(
                "CUDA initialization: The NVIDIA driver on your system is too old "
                "(found version 11040). Please update your GPU driver."
            )
            return False
        cuda.is_available = _unavailable
        def get_num_threads():
            return 4
    """,
    "two_gpus": """
        __version__ = "2.8.0+cu128"
        from . import cuda, version, backends, distributed
        def get_num_threads():
            return 8
    """,
}

SUBMODULES = {
    "version.py": """
        cuda = "12.8"
        hip = None
    """,
    "cuda/__init__.py": """
        from . import nccl

        class _Props:
            def __init__(self, i):
                self.name = "NVIDIA H100 80GB HBM3" if i == 0 else "NVIDIA GeForce RTX 5090"
                self.major, self.minor = (9, 0) if i == 0 else (12, 0)
                self.total_memory = 85520809984
                self.multi_processor_count = 132

        def is_available():
            return True

        def device_count():
            return 2

        def get_device_properties(i):
            return _Props(i)

        def get_arch_list():
            return ["sm_50", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"]

        def is_bf16_supported():
            return True
    """,
    "cuda/nccl.py": """
        def version():
            return (2, 27, 3)
    """,
    "backends/__init__.py": """
        from . import cudnn, cpu
    """,
    "backends/cudnn.py": """
        def version():
            return 91002
    """,
    "backends/cpu.py": """
        def get_cpu_capability():
            return "AVX512"
    """,
    "distributed.py": """
        def is_available():
            return True

        def is_gloo_available():
            return True

        def is_nccl_available():
            return True

        def is_mpi_available():
            return False
    """,
}


def make_fake_torch(root: Path, kind: str) -> Path:
    """Write torch package ``kind`` under ``root``; return the folder for PYTHONPATH."""
    pkg = root / kind / "torch"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(textwrap.dedent(BODIES[kind]))
    for rel, body in SUBMODULES.items():
        path = pkg / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(body))
    return root / kind
