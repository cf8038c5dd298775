"""Thin HTTP views; logic lives in intruder.services and intruder.selectors."""
