"""Answer evidence: what the platform knows about how an answer was given, and the flags and
exclusions drawn from it (issues 20, 36, 48).

`telemetry` (the browser's signals, checked), `page_views` (each serving of a text's page,
the server's own evidence), `canary` (a hidden word a copied text carries), `attention`
(instructed-response items), `catch_trials` (texts about made-up persons), `plausibility`
(reading-time floor and bursts), `flags` (the flags of an answer and the researcher's
review), `selectors` (flag codes, the study's exclusion rules, flagged answers), `models`
(page views and attention checks), `views` and `urls` (the flagged-answers page).

The core's participant services (judgments, writing, enrolment, assignment) and pages call it
to record evidence (one of the two packages the core calls, docs/development.md), so it imports
of the core only the tables, `selectors` (access, the study's groups) and `web`, never its
services or views: no layer folder and this package import each other.
"""
