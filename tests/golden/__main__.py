import sys

from tests.golden.cases import main

raise SystemExit(main(sys.argv[1:]))
