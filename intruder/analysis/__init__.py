"""Analyses of motivated-intruder judgments, as in the Textwash paper (sections 3.1.2.2-4.2).

Every analysis is a pure pandas function over two tidy frames (see `frames`): one row per
judgment and one row per anonymized text. They need no database, so they are tested on small
hand-computed fixtures; `intruder.selectors.analysis` builds the frames from the models and
`report.run_all` runs every analysis for the CLI and the researcher page.
"""
