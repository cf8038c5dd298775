"""TRIA (Manzanares-Salor et al., Algorithm 1): a BERT classifier over sliding windows.

``TRIAAttack`` glues the stages together: pretreat B_D ∪ B_D' (``attacks.curation``),
pre-train with MLM (``attacks.tria.pretraining``), fine-tune the classifier and predict
(``attacks.tria.finetuning``).
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from attacks.base import Attack, EpochCallback, ProgressCallback, Reidentification
from attacks.config import AttackConfig
from attacks.curation import pretreat_background, pretreat_documents
from attacks.data import DocumentSet, TRIADataset
from attacks.prediction import Prediction, predictions_from_scores
from attacks.runtime import configure_threads, is_main_process, resolve_device, set_seed
from attacks.timing import StageTimer
from attacks.windows import Windows, make_windows

if TYPE_CHECKING:
    import torch

    from attacks.tria.finetuning import EvalSet, FinetuneResult

MODEL_SUBDIR = "model"


class TRIAAttack(Attack):
    """Re-identify documents with a fine-tuned BERT classifier (TRIA)."""

    name = "tria"

    def __init__(self, config: AttackConfig | None = None) -> None:
        super().__init__(config)
        self.model: torch.nn.Module | None = None
        self.tokenizer: Any = None
        self.device = resolve_device()
        self.finetune_result: FinetuneResult | None = None

    def _windows(self, texts: list[str], window: tuple[int, int] | None) -> Windows:
        """Window ``texts``; sentence splitting caps a sentence at the model's input length."""
        max_length = min(self.tokenizer.model_max_length, 512)
        return make_windows(self.tokenizer, texts, window, max_length)

    def _prepare_eval_sets(
        self, sets: dict[str, DocumentSet], progress: ProgressCallback | None
    ) -> dict[str, EvalSet]:
        """Pretreat and window the evaluation sets once, before training."""
        from attacks.tria.finetuning import EvalSet

        column_of = []
        all_texts = []
        for column, documents in sets.items():
            for doc_id in documents.texts:
                column_of.append((column, doc_id))
                all_texts.append(documents.texts[doc_id])
        pretreated = dict(
            zip(column_of, pretreat_documents(all_texts, self.config, progress), strict=True)
        )
        eval_sets = {}
        for column, documents in sets.items():
            doc_ids = list(documents.texts)
            texts = [pretreated[(column, d)] for d in doc_ids]
            eval_sets[column] = EvalSet(
                doc_ids,
                dict(documents.true_names),
                self._windows(texts, self.config.finetuning_window),
            )
        return eval_sets

    def fit(
        self,
        background: dict[str, str],
        progress: ProgressCallback | None = None,
        dev_set: DocumentSet | None = None,
        monitor_sets: dict[str, DocumentSet] | None = None,
        on_epoch: EpochCallback | None = None,
    ) -> FinetuneResult:
        """Pretreat B_D, pre-train with MLM, fine-tune the classifier; score sets per epoch.

        ``dev_set`` picks the best epoch (early stopping); ``monitor_sets`` (column -> documents)
        are scored after every epoch to give TRIR per method per epoch.
        """
        # torch and transformers load here, on first use, not when the class is looked up.
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        from attacks.tria.checkpoints import finetuning_checkpoint_dir
        from attacks.tria.finetuning import finetune_classifier
        from attacks.tria.model import autocast_dtype, resolve_base_model, training_attention
        from attacks.tria.pretraining import pretrain_mlm
        from attacks.tria.trainer import fused_adamw_available

        config = self.config
        set_seed(config.seed)
        timer = StageTimer(self.stats)
        self.stats["threads"] = configure_threads(config.num_threads)
        self.stats["device"] = str(self.device)
        dtype = autocast_dtype(config.precision, self.device)
        self.stats["autocast"] = str(dtype) if dtype else "fp32"
        self.stats["levers"] = {
            "autocast": self.stats["autocast"],
            "threads": self.stats["threads"],
            "fused_adamw": fused_adamw_available(self.device),
            "masked_only_mlm_head": True,
            "trainer": "transformers.Trainer",
            "training_attention": training_attention(self.device),
            "length_bucketing": config.length_bucketing,
            "document_curation": config.use_document_curation,
            "cache_dir": config.cache_dir or None,
        }
        base_model = resolve_base_model(config)
        self.tokenizer = AutoTokenizer.from_pretrained(base_model)
        self.names = sorted(background)
        label_of = {name: i for i, name in enumerate(self.names)}

        start = time.perf_counter()
        train_texts, train_names = pretreat_background(background, config, progress)
        sets = dict(monitor_sets or {})
        dev_column = None
        if dev_set is not None:
            dev_column = config.dev_set_column_name or "dev"
            sets[dev_column] = dev_set
        eval_sets = self._prepare_eval_sets(sets, progress)
        timer.record("pretreatment", time.perf_counter() - start)

        start = time.perf_counter()
        train_windows = self._windows(train_texts, config.finetuning_window)
        labels = [label_of[train_names[i]] for i in train_windows.doc_index]
        pre_windows = None
        if config.use_additional_pretraining and config.pretraining_epochs:
            pre_windows = self._windows(train_texts, config.pretraining_window)
        timer.record(
            "windowing",
            time.perf_counter() - start,
            finetuning_windows=len(train_windows),
            finetuning_tokens=train_windows.n_tokens,
            pretraining_windows=len(pre_windows) if pre_windows else 0,
            eval_windows=sum(len(s.windows) for s in eval_sets.values()),
        )

        encoder_dir = base_model
        if pre_windows is not None:
            encoder_dir = pretrain_mlm(
                base_model, self.tokenizer, pre_windows, config, self.device, progress, timer
            )
        self.model = AutoModelForSequenceClassification.from_pretrained(
            encoder_dir,
            num_labels=len(self.names),
            id2label=dict(enumerate(self.names)),
            label2id=label_of,
            attn_implementation=training_attention(self.device),
        )
        checkpoints = finetuning_checkpoint_dir(
            config,
            encoder_dir,
            train_windows,
            labels,
            {column: s.windows for column, s in eval_sets.items()},
            dev_column,
        )
        self.finetune_result = finetune_classifier(
            self.model,
            train_windows,
            labels,
            self.names,
            config,
            self.device,
            self.tokenizer,
            eval_sets=eval_sets,
            dev_column=dev_column,
            progress=progress,
            timer=timer,
            on_epoch=on_epoch,
            checkpoint_dir=checkpoints,
        )
        self.stats["best_epoch"] = self.finetune_result.best_epoch
        self.stats["epochs_run"] = len(self.finetune_result.history)
        self.stats["history"] = self.finetune_result.history
        return self.finetune_result

    def reidentify_dataset(
        self,
        dataset: TRIADataset,
        progress: ProgressCallback | None = None,
        on_epoch: EpochCallback | None = None,
    ) -> Reidentification:
        """Train on the background; score each method column after every epoch.

        The dev set picks the epoch whose predictions are returned (``fit``).
        """
        monitor = {c: dataset.document_sets[c] for c in dataset.method_columns}
        result = self.fit(
            dataset.background,
            progress,
            dev_set=dataset.dev_set,
            monitor_sets=monitor,
            on_epoch=on_epoch,
        )
        return Reidentification(result.history, result.best_predictions)

    def predict(
        self,
        documents: dict[str, str],
        top_k: int = 5,
        true_names: dict[str, str] | None = None,
        progress: ProgressCallback | None = None,
    ) -> list[Prediction]:
        """Pretreat, window and classify each document; sum its window logits."""
        from attacks.tria.finetuning import (
            document_logits,
            predict_window_logits,
            prediction_trainer,
        )

        if self.model is None:
            raise RuntimeError("fit or load the attack before predicting")
        doc_ids = list(documents)
        texts = pretreat_documents([documents[d] for d in doc_ids], self.config, progress)
        windows = self._windows(texts, self.config.finetuning_window)
        start = time.perf_counter()
        with tempfile.TemporaryDirectory() as scratch:
            trainer = prediction_trainer(
                self.model, self.tokenizer, self.config, self.device, scratch
            )
            logits = predict_window_logits(trainer, windows, self.config.length_bucketing)
        StageTimer(self.stats).record("prediction", time.perf_counter() - start, len(windows))
        scores = document_logits(logits, windows.doc_index, len(doc_ids))
        return predictions_from_scores(doc_ids, scores, self.names, true_names, top_k)

    def save(self, directory: str | Path) -> None:
        """Save the classifier, its tokenizer and attack.json (config, labels, stats)."""
        if self.model is None:
            raise RuntimeError("nothing to save: fit the attack first")
        if not is_main_process():
            return
        directory = Path(directory)
        self.model.save_pretrained(directory / MODEL_SUBDIR)
        self.tokenizer.save_pretrained(directory / MODEL_SUBDIR)
        self._write_attack_file(directory)

    @classmethod
    def load(cls, directory: str | Path) -> TRIAAttack:
        """Load a TRIA attack saved by ``save``."""
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        directory = Path(directory)
        attack = cls._restore(directory)
        configure_threads(attack.config.num_threads)
        attack.tokenizer = AutoTokenizer.from_pretrained(directory / MODEL_SUBDIR)
        attack.model = AutoModelForSequenceClassification.from_pretrained(directory / MODEL_SUBDIR)
        attack.model.to(attack.device)
        return attack
