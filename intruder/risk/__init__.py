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
- `report`, `stats`, `predicted`, `provenance`: the report, pure computation (the rules of
  "identified by humans" are a study's setting: `intruder.identification`);
- `plots`, `rendering`: the report drawn and written (SVG, HTML, PDF, CSV, JSON);
- `forms`, `views`, `guard_views`, `researcher_parts`, `urls`, `apis`, `admin`, `demo`,
  `templates/risk/`: the web (the core's study and review pages show risk's parts through the
  registry that `researcher_parts` fills), the API and the demo.
"""
