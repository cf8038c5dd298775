"""Textwash-style anonymizer: find potentially sensitive information and replace it.

Importing the package is cheap; torch and transformers load in `Anonymizer.load`.
"""

from anonymize.model import AnonymizationResult, Anonymizer
from anonymize.placeholders import Span, render

__all__ = ["AnonymizationResult", "Anonymizer", "Span", "render"]
