"""Run many `--help` calls and import lines in one process, for tests/docs/test_manual.py.

Reads a JSON list of jobs on stdin and writes a JSON list of results on stdout. Each job is
`{"kind": "module" | "manage" | "script", "target": ..., "argv": [...]}` or
`{"kind": "import", "code": "from x import y"}`. One process instead of one per command keeps
the manual's test fast: Django, torch and spaCy load once.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import runpy
import sys
import traceback


def run_job(job: dict) -> dict:
    """Return the job's exit code and output; never raise."""
    out, err = io.StringIO(), io.StringIO()
    code = 0
    saved_argv = sys.argv[:]
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            if job["kind"] == "import":
                exec(compile(job["code"], "<manual>", "exec"), {})
            elif job["kind"] == "module":
                sys.argv = [f"python -m {job['target']}", *job["argv"]]
                runpy.run_module(job["target"], run_name="__main__", alter_sys=True)
            elif job["kind"] == "manage":
                sys.argv = ["manage.py", *job["argv"]]
                runpy.run_path("manage.py", run_name="__main__")
            elif job["kind"] == "script":
                sys.argv = [job["target"], *job["argv"]]
                runpy.run_path(job["target"], run_name="__main__")
            else:
                raise ValueError(f"unknown job kind {job['kind']!r}")
    except SystemExit as exit_:
        code = exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None else 1)
    except BaseException:
        code = 1
        err.write(traceback.format_exc())
    finally:
        sys.argv = saved_argv
    return {"code": code, "stdout": out.getvalue(), "stderr": err.getvalue()[-4000:]}


def main() -> None:
    jobs = json.load(sys.stdin)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "intruder.settings")
    results = [run_job(job) for job in jobs]
    sys.__stdout__.write(json.dumps(results))


if __name__ == "__main__":
    main()
