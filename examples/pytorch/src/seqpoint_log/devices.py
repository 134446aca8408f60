"""What the clock needs from the device: GPU synchronisation, NVML energy, Nsight marks.

torch is looked up in ``sys.modules`` rather than imported: a program that has not imported
torch is not timing GPU work, and importing it here would cost seconds.
"""

from __future__ import annotations

import sys
from typing import Any, Callable, Optional

Reader = Callable[[], float]


def nvml_energy_reader(device_index: int = 0) -> Optional[Reader]:
    """A function returning the GPU's energy counter in joules, or None where unavailable.

    Uses NVML's total energy since the driver loaded (Volta and newer). The counter is
    updated every few milliseconds, so steps much shorter than that get coarse energies.
    """
    try:
        import pynvml  # from the nvidia-ml-py package
    except ImportError:
        return None
    try:
        pynvml.nvmlInit()
        handle = pynvml.nvmlDeviceGetHandleByIndex(device_index)
        pynvml.nvmlDeviceGetTotalEnergyConsumption(handle)
    except Exception:  # NVML reports unsupported devices and missing drivers as errors
        return None
    return lambda: float(pynvml.nvmlDeviceGetTotalEnergyConsumption(handle)) / 1000.0


def cuda_synchronizer() -> Optional[Callable[[], None]]:
    """torch.cuda.synchronize when the program already uses CUDA, else None."""
    torch: Any = sys.modules.get("torch")
    if torch is None:
        return None
    try:
        if torch.cuda.is_available() and torch.cuda.is_initialized():
            return torch.cuda.synchronize  # type: ignore[no-any-return]
    except Exception:
        return None
    return None


def current_cuda_device() -> Optional[int]:
    torch: Any = sys.modules.get("torch")
    try:
        if torch is not None and torch.cuda.is_available():
            return int(torch.cuda.current_device())
    except Exception:
        return None
    return None


def resolve_energy(energy: Any, device_index: Optional[int]) -> Optional[Reader]:
    """``energy`` as given, or for ``"auto"`` NVML's counter of the current GPU (or None)."""
    if energy != "auto":
        return energy  # type: ignore[no-any-return]
    index = device_index if device_index is not None else current_cuda_device()
    return nvml_energy_reader(index) if index is not None else None


def resolve_sync(synchronize: Any) -> Optional[Callable[[], None]]:
    chosen: Optional[Callable[[], None]] = (
        cuda_synchronizer() if synchronize == "auto" else synchronize)
    return chosen


class TorchCudaRanges:
    """Marks a listed iteration for Nsight: cudaProfilerStart/Stop around an NVTX range."""

    def __init__(self, torch: Any) -> None:
        self._torch = torch

    def start(self, name: str) -> None:
        self._torch.cuda.profiler.start()
        self._torch.cuda.nvtx.range_push(name)

    def stop(self) -> None:
        self._torch.cuda.nvtx.range_pop()
        self._torch.cuda.profiler.stop()


def cuda_ranges() -> Optional[TorchCudaRanges]:
    """Nsight marks when the program already uses CUDA, else None."""
    torch: Any = sys.modules.get("torch")
    try:
        if torch is not None and torch.cuda.is_available() and torch.cuda.is_initialized():
            return TorchCudaRanges(torch)
    except Exception:
        return None
    return None
