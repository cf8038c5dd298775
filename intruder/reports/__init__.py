"""Computed report pages: the one home of their registry, store, refresh job and files.

A domain registers each of its pages (`registry.register_page`: risk, analysis, annotation
agreement) as job runners register with the queue; this package stores what they compute
per version of their data, refreshes it in the background and imports none of them.
"""
