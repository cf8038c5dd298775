"""Researcher pages (login and a role on the study required), one module per page family.

`studies` (list, create, edit, import, jobs, export), `review` (span editor, leak findings,
release), `parts` (the registry through which a package shows its parts on these pages: risk's
check, flags and guard), `monitor` (participants and progress), `manage` (members, clone,
archive), `forms` (their forms) and `urls` (mounted at /r/). Flagged answers are answer
evidence's pages (`intruder.evidence`).
"""
