"""Participant pages (writers and intruders), server-rendered, one class per page.

Entry: /s/<study slug>/?PROLIFIC_PID=..&STUDY_ID=..&SESSION_ID=.. enrols (or finds) the
participant and redirects to /p/<token>/, the one page that always shows their current step
(`flow.home`: a lookup in `pages.STEP_PAGES`). Every form posts to its own URL and redirects
back (post/redirect/get), errors included: a rejected answer is kept on the participant
(`services.form_state`) and shown after the redirect, so reloading any page or going back
never resubmits, and the services make a repeated post a no-op.

`base` holds what every page shares (`Page`, `StatusPage`, `PageContent`), `pages` the pages
themselves and the order each kind of study walks them, `forms` the answers' forms and
`flow` the views that are no page (entry, home, telemetry beacon, familiarity answer).
"""
