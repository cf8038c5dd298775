"""What every HTML view shares, whichever package holds it (`views/`, `risk/`, `prolific/`,
`annotation/`): who may open a study's pages, the message after asking for a job, form
fields bounded as the model is. It imports no view, so every view may import it."""
