"""Exit codes, stable across releases (CI scripts branch on them).

0  ready: nothing wrong (for probe: the probe ran)
1  not ready: an error finding, a failed smoke test
2  usage error: a bad option, override or input file; an output file (--junit, --html)
   that is not a regular file or a new path envcheck may write, refused before any work
3  envcheck itself could not run or finish (an internal error, unreadable tables, an
   output file whose writing failed after the run)
128 + signum  stopped by SIGINT (130) or SIGTERM (143) (envcheck._entry)
"""

OK = 0
NOT_READY = 1
USAGE = 2
INTERNAL = 3
