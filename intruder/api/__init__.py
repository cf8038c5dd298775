"""REST API for researchers (token auth)."""
