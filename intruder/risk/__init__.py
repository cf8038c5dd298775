"""Machine re-identification risk: attack runs, the pre-release risk check, the guard job,
background uploads and the human-vs-machine risk report (manual: docs/risk-report.md).

Part of the `intruder` app (its tables live in `models.py`, under the abstract `StudyRun`,
and `intruder/models.py` imports them; app label and table names are the app's); the
`attacks` and `guard` libraries do the work (the fold x attack x method loop is
`attacks.crossval.attack_cells`), this package stores and shows it.

- `models`: the tables (the ranges of their settings are `intruder.bounds`);
- `methods`, `method_texts`: names of what an attack run attacks, and its texts under each;
- `attack_runs`, `guarding`, `background_uploads`: services (writes and jobs);
- `selectors`, `flags`: reads;
- `report`, `stats`, `rules`, `predicted`, `provenance`: the report, pure computation;
- `plots`, `rendering`: the report drawn and written (SVG, HTML, PDF, CSV, JSON);
- `forms`, `views`, `guard_views`, `review_parts`, `urls`, `apis`, `admin`, `tags`, `demo`:
  the web (the review page shows the guard through `review_parts`), the API and the demo.
"""
