"""What `transformers.Trainer` needs to know about the anonymizer: its dev score and its loss log.

Kept apart from `anonymize.train` because importing Trainer loads torch and the training
stack (seconds), which `python -m anonymize --help` and the run command should not pay for.
"""

from __future__ import annotations

from transformers import Trainer, TrainerCallback

from anonymize.alignment import AlignedDocument
from anonymize.evaluate import evaluate_predictions, predict_with_anonymizer
from anonymize.model import Anonymizer

# The dev score that selects the epoch (and stops early), as Trainer names it.
SELECTION_METRIC = "weighted_f1_psi"


def score_in_memory(
    model, tokenizer, max_length: int, stride: int, documents: list[AlignedDocument]
) -> dict[str, object]:
    """Score the model being trained on `documents` at the default threshold, without saving."""
    model.eval()
    anonymizer = Anonymizer(model, tokenizer, "in-training", max_length=max_length, stride=stride)
    cutoff = anonymizer.threshold
    predicted = predict_with_anonymizer(anonymizer, documents, [cutoff])[cutoff]
    return evaluate_predictions(documents, predicted)


class DevScoringTrainer(Trainer):
    """A Trainer whose evaluation is the anonymizer's own dev score on whole documents.

    Trainer's built-in evaluation scores subword windows; this one runs the model as
    `Anonymizer` does (sliding windows stitched per document, word categories, threshold),
    so the epoch kept by `load_best_model_at_end` is the one that anonymizes dev best.
    """

    def __init__(self, *args, window: tuple[int, int], **kwargs) -> None:
        """Remember the (max_length, stride) the anonymizer will use."""
        super().__init__(*args, **kwargs)
        self.window = window

    def evaluate(self, eval_dataset=None, ignore_keys=None, metric_key_prefix: str = "eval"):
        """Score the dev documents, log the scores and hand them to the callbacks."""
        documents = self.eval_dataset if eval_dataset is None else eval_dataset
        scored = score_in_memory(self.model, self.processing_class, *self.window, documents)
        metrics = {
            f"{metric_key_prefix}_{SELECTION_METRIC}": scored["psi_categories"]["weighted"]["f1"],
            f"{metric_key_prefix}_binary_psi_f1": scored["binary_psi"]["f1"],
        }
        self.log(metrics)
        self.control = self.callback_handler.on_evaluate(
            self.args, self.state, self.control, metrics
        )
        return metrics


class LogLossAtEpochEnd(TrainerCallback):
    """Log the loss at each epoch's end too, so the manifest always ends on the final loss.

    Every run ends at an epoch's end, also when `max_steps` or early stopping cut it short.
    """

    def on_epoch_end(self, args, state, control, **kwargs):
        """Ask for a log line before the epoch's evaluation and checkpoint."""
        control.should_log = True
