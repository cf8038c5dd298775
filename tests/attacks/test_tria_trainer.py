"""TRIA on transformers' Trainer: the reference's optimisation step, window order, resume."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from attacks import AttackConfig
from attacks.tria.finetuning import (
    finetune_classifier,
    predict_window_logits,
    prediction_trainer,
)
from attacks.tria.pretraining import MaskedOnlyMLM
from attacks.tria.trainer import TRIATrainer, training_arguments
from attacks.windows import build_windows

TEXTS = [
    "mira tolk sails boats in the north sea every summer with her two brothers",
    "oskar venn paints murals",
    "lena brisk composes songs for film and stage and teaches harmony in a small town",
]
CPU = torch.device("cpu")


@pytest.fixture
def tiny(tiny_bert_dir):
    """Return (tokenizer, windows of varied lengths, their document labels, model factory)."""
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_bert_dir)
    windows = build_windows(tokenizer, TEXTS, 10, 2)
    labels = list(windows.doc_index)

    def model():
        # No dropout, so the Trainer and a plain loop see the very same function.
        torch.manual_seed(0)
        return AutoModelForSequenceClassification.from_pretrained(
            tiny_bert_dir,
            num_labels=len(TEXTS),
            hidden_dropout_prob=0.0,
            attention_probs_dropout_prob=0.0,
            attn_implementation="eager",
        )

    return tokenizer, windows, labels, model


def _config(tmp_path, **values) -> AttackConfig:
    return AttackConfig(
        precision="fp32",
        cache_dir="",
        output_folder_path=str(tmp_path / "out"),
        finetuning_learning_rate=1e-3,
        max_grad_norm=0.1,  # small enough that clipping acts at every step
        **values,
    )


def test_training_arguments_are_the_references_adamw_constant_rate(tmp_path):
    args = training_arguments(_config(tmp_path), tmp_path, CPU, learning_rate=3e-5, epochs=2)
    assert (args.adam_beta1, args.adam_beta2, args.adam_epsilon, args.weight_decay) == (
        0.9,
        0.999,
        1e-6,
        0.0,
    )
    assert (args.learning_rate, args.num_train_epochs, args.max_grad_norm) == (3e-5, 2, 0.1)
    assert str(args.lr_scheduler_type.value) == "constant"
    assert args.train_sampling_strategy == "group_by_length"


def test_trainer_takes_the_same_steps_as_a_plain_adamw_loop(tiny, tmp_path):
    tokenizer, windows, labels, make_model = tiny
    epochs = 4
    # One batch per epoch: the Trainer's sampling order cannot matter.
    config = _config(tmp_path, finetuning_epochs=epochs, finetuning_batch_size=len(windows))
    trained = make_model()
    finetune_classifier(trained, windows, labels, ["a", "b", "c"], config, CPU, tokenizer)

    reference = make_model()
    optimizer = torch.optim.AdamW(
        reference.parameters(), lr=1e-3, betas=(0.9, 0.999), eps=1e-6, weight_decay=0.0
    )
    batch = tokenizer.pad({"input_ids": windows.input_ids}, return_tensors="pt")
    for _ in range(epochs):
        reference.train()
        reference(**batch, labels=torch.tensor(labels)).loss.backward()
        torch.nn.utils.clip_grad_norm_(reference.parameters(), 0.1)
        optimizer.step()
        optimizer.zero_grad()
    for a, b in zip(trained.parameters(), reference.parameters(), strict=True):
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-6)


def test_window_logits_come_back_in_window_order_despite_length_grouping(tiny, tmp_path):
    tokenizer, windows, _, make_model = tiny
    model = make_model().eval()
    assert len({len(w) for w in windows.input_ids}) > 1  # lengths differ: order is at stake
    config = _config(tmp_path, eval_batch_size=2)
    trainer = prediction_trainer(model, tokenizer, config, CPU, tmp_path / "scratch")
    logits = predict_window_logits(trainer, windows, bucketing=True)
    with torch.no_grad():
        direct = [
            model(input_ids=torch.tensor([ids])).logits[0].numpy() for ids in windows.input_ids
        ]
    np.testing.assert_allclose(logits, np.stack(direct), rtol=1e-4, atol=1e-5)


@pytest.mark.slow  # trains twice, with a crash between
def test_crashed_finetuning_resumes_from_its_last_checkpoint(tiny, tmp_path):
    from transformers import TrainerCallback

    tokenizer, windows, labels, make_model = tiny
    config = _config(tmp_path, finetuning_epochs=3, finetuning_batch_size=len(windows))

    class Crash(TrainerCallback):
        def on_epoch_end(self, args, state, control, **kwargs):
            if state.epoch >= 2:
                raise RuntimeError("simulated crash")

    checkpoints = tmp_path / "checkpoints"
    original_init = TRIATrainer.__init__

    def crashing_init(self, *args, **kwargs):
        original_init(self, *args, **kwargs)
        self.add_callback(Crash())

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(TRIATrainer, "__init__", crashing_init)
        with pytest.raises(RuntimeError, match="simulated crash"):
            finetune_classifier(
                make_model(), windows, labels, ["a", "b", "c"], config, CPU, tokenizer,
                checkpoint_dir=checkpoints,
            )  # fmt: skip
    assert (checkpoints / "checkpoint-1").is_dir()

    resumed = make_model()
    steps: list[int] = []
    finetune_classifier(
        resumed, windows, labels, ["a", "b", "c"], config, CPU, tokenizer,
        progress=lambda stage, done, total: steps.append(done) if stage == "finetuning" else None,
        checkpoint_dir=checkpoints,
    )  # fmt: skip
    assert steps == [2, 3]  # epoch 1 came from the checkpoint, not from training again
    uninterrupted = make_model()
    finetune_classifier(uninterrupted, windows, labels, ["a", "b", "c"], config, CPU, tokenizer)
    for a, b in zip(resumed.parameters(), uninterrupted.parameters(), strict=True):
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-6)
    assert not checkpoints.exists()  # removed once training has finished


def test_masked_only_mlm_loss_equals_the_models_own(tiny_bert_dir):
    from transformers import AutoModelForMaskedLM

    torch.manual_seed(0)
    model = AutoModelForMaskedLM.from_pretrained(tiny_bert_dir).eval()
    input_ids = torch.randint(1000, 2000, (2, 12))
    labels = torch.full_like(input_ids, -100)
    labels[0, 3], labels[1, 7] = 1500, 1600
    mask = torch.ones_like(input_ids)
    own = model(input_ids=input_ids, attention_mask=mask, labels=labels).loss
    wrapped = MaskedOnlyMLM(model)(input_ids, mask, labels)["loss"]
    torch.testing.assert_close(wrapped, own)
    # Checkpoints are safetensors files: no two entries may share memory (the tied decoder).
    pointers = [t.data_ptr() for t in MaskedOnlyMLM(model).state_dict().values()]
    assert len(pointers) == len(set(pointers))
