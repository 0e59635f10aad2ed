"""How long the deep probe may take by default: one value that the probe, its child and the
runtime check's advice ("give it longer: --timeout 60") share, in a module that imports
nothing, so the deep probe need not import the package that runs it."""

DEFAULT_TIMEOUT = 60.0
