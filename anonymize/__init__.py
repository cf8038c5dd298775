"""Textwash-style anonymizer: find potentially sensitive information and replace it.

Importing the package is cheap; torch and transformers load in `Anonymizer.load`.
"""

from anonymize.model import AnonymizationResult, Anonymizer
from anonymize.placeholders import Span, render
from anonymize.protocol import TextAnonymizer

__all__ = ["AnonymizationResult", "Anonymizer", "Span", "TextAnonymizer", "render"]
