"""Read an envcheck JSON document pasted back: a Facts document or a `check --json` report."""

from __future__ import annotations

import json
from typing import List, Optional

from ..facts import Facts, FactsError


def read_json(text: str, errors: Optional[List[str]] = None) -> Optional[Facts]:
    """An envcheck Facts document or `check --json` report, when the text is one.
    A document this envcheck cannot read (a newer schema) adds the reason to ``errors``."""
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        return None
    try:
        data = json.loads(text[start : end + 1])
    except (ValueError, RecursionError):  # not JSON, an integer of >4300 digits, too deep
        return None
    if not isinstance(data, dict):
        return None
    doc = data.get("facts") if isinstance(data.get("facts"), dict) else data
    if not isinstance(doc, dict):
        return None
    if "system" not in doc and "nvidia" not in doc and "torch" not in doc:
        return None
    try:
        return Facts.from_dict(doc)
    except FactsError as exc:
        if errors is not None:
            errors.append(f"an envcheck JSON report envcheck cannot read: {exc}")
        return None
    except RecursionError:
        return None
