"""Numeric precision: the choices a CLI or config offers and where bf16 runs natively."""

from __future__ import annotations

from model_runtime.hardware import cpu_features

# "auto" = bf16 autocast where the device computes bf16 natively, fp32 elsewhere.
PRECISIONS = ("auto", "fp32", "bf16")


def cpu_supports_bf16() -> bool:
    """Return whether this CPU computes bf16 matmuls natively (AVX512-BF16 or AMX)."""
    return cpu_features().bf16


def bf16_supported(device_type: str = "cpu") -> bool:
    """Return whether ``device_type`` ("cuda", "cpu", ...) computes bf16 natively."""
    if device_type == "cuda":
        import torch

        return torch.cuda.is_bf16_supported()
    return cpu_supports_bf16()


def resolve_precision(precision: str, device_type: str = "cpu") -> str:
    """Return "bf16" or "fp32" for ``precision`` on ``device_type``.

    "auto" becomes bf16 where the device has native bf16 and fp32 elsewhere; an explicit
    "bf16" on a device without it is an error rather than a silent slow emulation.
    """
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}, not {precision!r}")
    if precision == "fp32":
        return precision
    if bf16_supported(device_type):
        return "bf16"
    if precision == "bf16":
        hardware = "GPU" if device_type == "cuda" else "CPU (AVX512-BF16/AMX)"
        raise RuntimeError(f"bf16 requested but this {hardware} has no native bf16")
    return "fp32"
