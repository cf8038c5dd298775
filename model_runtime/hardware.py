"""What this CPU computes natively: the one place the hardware is asked.

Every precision choice (bf16 autocast, int8 matmuls) reads `cpu_features()`. The variable
`MODEL_RUNTIME_CPU` overrides the detection, so a test or a benchmark picks the path instead
of the host: "host" (the default) asks the CPU, "none" claims neither unit, and a comma list
such as "bf16,vnni" claims those. The tests set it, so their outcome never depends on the
machine they run on; forcing a unit the CPU lacks still runs (torch emulates it), only slower.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

CPU_OVERRIDE_VARIABLE = "MODEL_RUNTIME_CPU"
FEATURE_NAMES = ("bf16", "vnni")

# CPU flags of int8 dot-product units that accumulate in int32 (no int16 saturation).
_VNNI_FLAGS = frozenset({"avx512_vnni", "avx_vnni", "amx_int8"})


@dataclass(frozen=True)
class CpuFeatures:
    """The native units a precision path needs."""

    bf16: bool  # bf16 matmuls (AVX512-BF16 or AMX)
    vnni: bool  # int8 dot products with int32 accumulation (VNNI or AMX-int8)


def cpu_features() -> CpuFeatures:
    """Return the CPU's native units, or those `MODEL_RUNTIME_CPU` claims."""
    override = os.environ.get(CPU_OVERRIDE_VARIABLE, "host").strip().lower()
    if override in ("", "host"):
        return CpuFeatures(bf16=_host_has_bf16(), vnni=_host_has_vnni())
    claimed = set() if override == "none" else {f.strip() for f in override.split(",")}
    unknown = claimed - set(FEATURE_NAMES)
    if unknown:
        raise ValueError(
            f"{CPU_OVERRIDE_VARIABLE} must be 'host', 'none' or a comma list of "
            f"{', '.join(FEATURE_NAMES)}, not {override!r}"
        )
    return CpuFeatures(bf16="bf16" in claimed, vnni="vnni" in claimed)


def _host_has_bf16() -> bool:
    import torch

    return torch.backends.mkldnn.is_available() and bool(
        torch.ops.mkldnn._is_mkldnn_bf16_supported()
    )


def _host_has_vnni() -> bool:
    """Whether /proc/cpuinfo lists a VNNI/AMX-int8 flag (False where it cannot be read)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("flags"):
                    return bool(_VNNI_FLAGS & set(line.split(":", 1)[1].split()))
    except OSError:
        pass
    return False
