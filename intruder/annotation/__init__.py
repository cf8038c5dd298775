"""PSI annotation projects: span annotation in the browser, agreement, TAB-compatible export and
evaluation of anonymizers against the annotations (manual: docs/annotation.md)."""
