"""Writes: business logic as plain functions with keyword-only typed arguments."""
