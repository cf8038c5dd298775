"""Entry point for ``python -m attacks``."""

import sys

from attacks.cli import main

sys.exit(main())
