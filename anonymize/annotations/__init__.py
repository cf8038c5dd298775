"""PSI annotations: TAB-compatible formats, TAB's evaluation metrics, inter-annotator agreement
and the mapping of annotations to training data for the tagger.

Plain Python (no Django): the platform's annotation app, the management commands and
`python -m anonymize train --annotations` all use it.
"""

from anonymize.annotations.schema import AnnotatedDocument, Mention

__all__ = ["AnnotatedDocument", "Mention"]
