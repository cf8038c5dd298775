"""Machine re-identification risk: attack runs, the pre-release risk check, the guard job,
background uploads and the human-vs-machine risk report (manual: docs/risk-report.md).

Part of the `intruder` app (its models live in `intruder/models.py`, its tables keep their
names); the `attacks` and `guard` libraries do the work, this package stores and shows it.

- `methods`: names of what an attack run attacks;
- `attack_runs`, `guarding`, `background_uploads`: services (writes and jobs);
- `selectors`, `flags`: reads;
- `report`, `stats`, `rules`, `predicted`, `provenance`: the report, pure computation;
- `plots`, `rendering`: the report drawn and written (SVG, HTML, PDF, CSV, JSON);
- `views`, `urls`, `apis`, `admin`, `tags`, `demo`: the web, the API and the demo.
"""
