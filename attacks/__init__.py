"""Re-identification attacks on anonymized texts: TRIA and cheap record-linkage baselines.

A plain library (no Django): ``load_dataset`` reads the reference data format,
``get_attack(name, config)`` returns an attack with ``fit``/``predict``/``save``/``load``,
and ``trir`` turns predictions into the Text Re-Identification Risk.
"""

from attacks.base import Attack
from attacks.config import AttackConfig, ConfigError
from attacks.data import DatasetError, DocumentSet, TRIADataset, load_dataset
from attacks.metrics import TRIRResult, trir
from attacks.prediction import Prediction
from attacks.registry import ATTACKS, get_attack, load_attack

__all__ = [
    "ATTACKS",
    "Attack",
    "AttackConfig",
    "ConfigError",
    "DatasetError",
    "DocumentSet",
    "Prediction",
    "TRIADataset",
    "TRIRResult",
    "get_attack",
    "load_attack",
    "load_dataset",
    "trir",
]
