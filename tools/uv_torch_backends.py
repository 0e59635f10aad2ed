"""Print the values a real uv accepts for ``--torch-backend``, read from uv itself.

uv answers an unknown value with ``[possible values: ...]`` before it resolves
anything (no network). Paste the list into compat_tables/installers.json, with
the uv version this printed as the source.

    python tools/uv_torch_backends.py [path/to/uv]
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys


def main() -> None:
    uv = sys.argv[1] if len(sys.argv) > 1 else shutil.which("uv") or "uv"
    version = subprocess.run([uv, "--version"], capture_output=True, text=True, check=True)
    out = subprocess.run(
        [uv, "pip", "compile", "--no-index", "--torch-backend=not-a-backend", "-"],
        input="",
        capture_output=True,
        text=True,
        check=False,
    )
    found = re.search(r"\[possible values: ([^\]]+)\]", out.stderr)
    if not found:
        sys.exit(f"{uv} printed no list of possible values:\n{out.stderr}")
    values = [v.strip() for v in found.group(1).split(",")]
    print(json.dumps({"uv": version.stdout.strip(), "values": values}))


if __name__ == "__main__":
    main()
