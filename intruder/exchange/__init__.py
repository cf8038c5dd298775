"""Data exchange: a study's tables in and out as CSV and JSON lines (imports and exports)."""
