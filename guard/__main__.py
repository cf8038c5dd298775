"""Run the guard CLI: python -m guard guard ..."""

import sys

from guard.cli import main

sys.exit(main())
