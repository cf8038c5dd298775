"""Reads: query functions returning querysets, dicts or DataFrames."""
