"""Today's date for what envcheck dates (the tables' age): the clock, or SOURCE_DATE_EPOCH.

SOURCE_DATE_EPOCH is the reproducible-builds convention for "the time this output is made
at": set, a report made today and one made next year from the same facts read the same (the
test suite's saved outputs rely on it); unset or not a number, the clock."""

from __future__ import annotations

import os
from datetime import date, datetime, timezone
from typing import Mapping, Optional


def today(environ: Optional[Mapping[str, str]] = None) -> date:
    env = os.environ if environ is None else environ
    epoch = env.get("SOURCE_DATE_EPOCH", "")
    if epoch.isdigit():
        try:
            return datetime.fromtimestamp(int(epoch), timezone.utc).date()
        except (OverflowError, OSError, ValueError):
            pass
    return date.today()
