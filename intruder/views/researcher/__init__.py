"""Researcher pages (login and a role on the study required), one module per page family.

`studies` (list, create, edit, import, jobs, export), `review` (span editor, leak findings,
release, guard), `monitor` (participants and progress), `flags` (flagged answers),
`manage` (members, clone, archive), `forms` (their forms) and `urls` (mounted at /r/).
"""
