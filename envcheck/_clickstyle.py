"""The click settings every envcheck command shares (help options, width).

A module of its own so that `envcheck healthcheck`, which runs without the CLI
group (``envcheck._entry``: the group loads the compatibility tables), is
built with the same settings as every other command.
"""

CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}
