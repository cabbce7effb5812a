"""The CUDA device (DESIGN §14).

``dynd.cuda.is_available()`` says whether a CUDA driver and device are
present; arrays move with ``a.to("cuda")`` / ``a.cpu()`` and dynd's
functions run on them there. Without a device, ``is_available()`` is False
and ``a.to("cuda")`` raises :class:`dynd.ExternalError` saying why.
"""

from __future__ import annotations

from ._dynd import _cuda_device_count, _cuda_emulate, _cuda_is_available


def is_available() -> bool:
    """True when a CUDA driver and at least one device are present."""
    return bool(_cuda_is_available())


def device_count() -> int:
    """The number of CUDA devices (0 without a driver)."""
    return int(_cuda_device_count())


def _emulate(ordinal: int) -> None:
    """Installs the host emulator of the CUDA device as ``cuda:<ordinal>``
    (for tests without a GPU: dynd's generated CUDA C compiled by the C++
    compiler and run on host threads). ``is_available()`` stays False.
    Raises :class:`dynd.ExternalError` without a C++17 compiler."""
    _cuda_emulate(ordinal)


__all__ = ["device_count", "is_available"]
