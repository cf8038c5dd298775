"""Researcher pages (login and a role on the study required), one module per page family.

`studies` (list, create, edit, import, jobs, export), `review` (span editor, leak findings,
release), `review_parts` (what risk adds to the review pages: the guard, the machine's flags),
`monitor` (participants and progress), `flags` (flagged answers), `manage` (members, clone,
archive), `forms` (their forms) and `urls` (mounted at /r/).
"""
