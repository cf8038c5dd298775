"""A job worker of a served rehearsal: `manage.py run_worker` on the rehearsal's clock.

python -m intruder.rehearsal.worker [run_worker's options]
"""

from __future__ import annotations

import os
import sys


def main(argv: list[str]) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "intruder.settings")
    import django

    django.setup()
    from django.core.management import call_command

    from intruder.rehearsal.clock import clock_from_environment

    clock_from_environment()
    call_command("run_worker", *argv)


if __name__ == "__main__":
    main(sys.argv[1:])
