"""``python -m envcheck``: the same as the ``envcheck`` command."""

from ._entry import main

if __name__ == "__main__":
    main()
