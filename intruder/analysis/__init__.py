"""The human analyses: motivated-intruder judgments analysed as in the Textwash paper
(sections 3.1.2.2-4.2), and the researcher's analysis page.

The analyses are pure pandas functions over two tidy frames (see `frames`): one row per
judgment and one row per anonymized text. They need no database, so they are tested on small
hand-computed fixtures, and none imports the Django side. That side is `selectors` (the frames
built from the models), `services` (the construct-loss job), `page` (the stored report page,
registered with `intruder.reports`), `plots`, `layouts` and `report_files` (what the page and
`manage.py analyse_study` show), `views` and `urls`; `report.run_all` runs every analysis for
both.
"""
