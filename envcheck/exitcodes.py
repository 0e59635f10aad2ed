"""Exit codes, stable across releases (CI scripts branch on them).

0  ready: nothing wrong (for probe: the probe ran)
1  not ready: an error finding, a failed smoke test
2  usage error: a bad option, override or input file
3  envcheck itself could not run (an internal error, unreadable tables)
"""

OK = 0
NOT_READY = 1
USAGE = 2
INTERNAL = 3
