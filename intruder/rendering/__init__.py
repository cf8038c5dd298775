"""Rendering of computed results for reading: SVG plots, the paper's table layouts, report files.

Kept apart from `intruder.analysis`, which computes the tables they show.
"""
