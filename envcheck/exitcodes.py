"""Exit codes, stable across releases (CI scripts branch on them).

0  ready: nothing wrong (for probe: the probe ran)
1  not ready: an error finding, a failed smoke test
2  usage error: a bad option, override or input file; an output file (--junit, --html)
   that is not a regular file or a new path envcheck may write, refused before any work
3  envcheck itself could not run or finish (an internal error, unreadable tables, an
   output file whose writing failed after the run)
4  tables update: the source could not be read (offline, no answer in time, an HTTP error)
5  tables update: the tables offered were refused (a checksum that does not match, a
   truncated file, a table that does not validate, another schema); the old tables stay
6  tables update: the tables offered are not newer than the ones in use; nothing changed
128 + signum  stopped by SIGINT (130) or SIGTERM (143) (envcheck._entry)
"""

OK = 0
NOT_READY = 1
USAGE = 2
INTERNAL = 3
UNREACHABLE = 4
REFUSED = 5
NOT_NEWER = 6
