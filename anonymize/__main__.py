"""Entry point of `python -m anonymize`."""

import sys

from anonymize.cli import main

if __name__ == "__main__":
    sys.exit(main())
