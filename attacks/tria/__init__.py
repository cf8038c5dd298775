"""TRIA: a BERT classifier over sliding windows, pre-trained on and fine-tuned to B_D ∪ B_D'.

One module per stage (Algorithm 1, Sects. 5.3-5.5 of Manzanares-Salor et al.); the texts'
pretreatment is shared with every attack (``attacks.curation``):

- ``model``: the base checkpoint, the autocast precision and the training attention kernel;
- ``checkpoints``: content-keyed folders for pre-trained models and resumable runs;
- ``trainer``: ``transformers.Trainer`` arguments, callbacks and TRIR after each epoch;
- ``pretraining``: masked-language-model pre-training (``pretrain_mlm``);
- ``finetuning``: the classifier's training and prediction (``finetune_classifier``,
  ``predict_window_logits``, ``document_logits``);
- ``attack``: ``TRIAAttack``, the stages glued together behind the ``Attack`` interface.
"""
