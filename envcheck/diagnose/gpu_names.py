"""A GPU's model as NVML names it ("NVIDIA GeForce RTX 3090"), from the ways people write it
in a report ("RTX 3090", "3060ti" under a GPU label, "Tesla M40"): the labelled facts and
the GPUs a text mentions are named alike, so the tables find each by one name."""

from __future__ import annotations

import re
from typing import Optional

from .._patterns import compile_on_use

_GPU = compile_on_use(
    r"^(?:(?P<count>\d{1,2})\s?x\s?)?(?P<name>(?:nvidia |amd )?(?:geforce |quadro |tesla |radeon )?"
    r"(?:(?:rtx|gtx)(?=\s?\d)|titan|quadro|tesla|a\d{1,3}|h\d{2,3}|l\d{1,2}s?|v100|p100|p40|t4|k80"
    r"|b200|gb200|gh200|rx|mi\d{2,3}|instinct|radeon|(?<=geforce )\d{3}mx)(?:\b|(?=\d))[\w -]{0,40})$",
    re.IGNORECASE,
)


def gpu_name(raw: str) -> Optional[str]:
    """A GPU model as NVML names it, from the way people write it ("RTX 3090", "3060ti" under
    a GPU label, "Tesla M40"); None for words that name no GPU."""
    raw = raw.strip()
    bare = re.fullmatch(r"(?:nvidia\s)?(?:geforce\s)?(\d{4})\s?(ti|super)?", raw, re.IGNORECASE)
    if bare:  # "Video card: 3060ti", "nVidia GeForce 4070TI": a GeForce's number alone
        family = "GTX" if bare.group(1).startswith("1") else "RTX"  # GTX 1080, 1660
        raw = f"{family} {bare.group(1)}" + (
            f" {bare.group(2).upper().replace('TI', 'Ti')}" if bare.group(2) else ""
        )
    match = _GPU.match(raw)
    if match is None:
        return None
    name = re.sub(r"\s+", " ", match.group("name")).strip()
    name = re.sub(r"\s+\d{1,3}\s?gb\b.*$", "", name, flags=re.IGNORECASE)  # "RTX 2060 6Gb"
    if re.match(r"(?:rtx|gtx) ?\d", name, re.IGNORECASE):  # a GeForce as people shorten it
        name = "NVIDIA GeForce " + re.sub(r"^(\w{3}) ?", lambda m: m.group(1).upper() + " ", name)
    elif re.match(r"(?:geforce|quadro|tesla|titan)\b", name, re.IGNORECASE):
        name = "NVIDIA " + name
    return name
