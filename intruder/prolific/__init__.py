"""Prolific from the platform: API client, webhooks, publishing, reviews and bonuses.

Follows Prolific's public API v1 (https://docs.prolific.com/api-reference, read 2026-11-25):
token auth, studies created as drafts and moved by transitions, submissions transitioned
singly or approved in bulk, bonus payments set up then paid, and workspace webhooks signed
with the workspace secret. `fake_server` implements that behaviour on loopback for the
tests and the benchmark, since Prolific cannot be reached from the test machines.
"""
