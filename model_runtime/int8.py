"""int8 inference on the CPU: dynamic quantization of a model's Linear layers.

Weights are stored as int8 with one scale per output channel; activations are quantized per
batch on the fly, so the matmuls run on the CPU's int8 units (VNNI) instead of bf16 or fp32.
Per-channel weights and full 8-bit activations are what keep the anonymizer's F1 within
0.003 of bf16: per-tensor weights lost 0.0063 weighted test F1
(`benchmarks/results/anonymize_levers.json`), per-channel weights with torch's default 7-bit
activations 0.0039 weighted dev F1 (`benchmarks/RESULTS.md`, h25-anon). 8-bit activations
are safe only on VNNI units (int32 accumulation; older AVX2 kernels saturate at int16), so
int8 is offered only where the CPU has them.
"""

from __future__ import annotations

from collections.abc import Callable

from model_runtime.hardware import cpu_features

# Quantized engines that run int8 matmuls on x86 vector units (fbgemm, oneDNN).
_X86_ENGINES = frozenset({"x86", "fbgemm", "onednn"})


def int8_supported() -> bool:
    """Return whether torch has an x86 int8 engine (fbgemm/oneDNN) and the CPU VNNI units."""
    import torch

    engines = set(torch.backends.quantized.supported_engines)
    return bool(_X86_ENGINES & engines) and cpu_features().vnni


def _int8_linear_class():
    """Return the dynamic int8 Linear that also takes bf16 input (from autocast regions)."""
    import torch
    from torch.ao.nn.quantized.dynamic import Linear as DynamicQuantizedLinear

    class Int8Linear(DynamicQuantizedLinear):
        """A dynamically quantized Linear that accepts bf16 or fp32 input, returns fp32.

        Activations use all 8 bits (`reduce_range=False`): VNNI accumulates in int32.
        """

        def forward(self, x):
            packed = self._packed_params._packed_params
            return torch.ops.quantized.linear_dynamic(x.float(), packed, reduce_range=False)

    return Int8Linear


def quantize_linears(model, include: Callable[[str], bool]):
    """Replace, in place, every `nn.Linear` whose module name passes `include` by int8.

    Returns the model. The other modules (embeddings, layer norms, excluded Linears) keep
    their dtype.
    """
    import warnings

    import torch
    from torch.ao.quantization import per_channel_dynamic_qconfig, quantize_dynamic

    names = {
        name: per_channel_dynamic_qconfig
        for name, module in model.named_modules()
        if type(module) is torch.nn.Linear and include(name)
    }
    with warnings.catch_warnings():
        # torch 2.13 points eager-mode quantization users at torchao; the op is unchanged.
        warnings.simplefilter("ignore", DeprecationWarning)
        warnings.simplefilter("ignore", UserWarning)
        return quantize_dynamic(
            model,
            names,
            dtype=torch.qint8,
            mapping={torch.nn.Linear: _int8_linear_class()},
            inplace=True,
        )
