"""The exception classes of dynd (DESIGN §11).

Each derives from :class:`dynd.Error` and from the matching builtin, so
``except ValueError`` catches a parse error as Python code expects, and
carries ``.kind``: the error's name in the CLI and the C ABI.
"""

from __future__ import annotations


class Error(Exception):
    """Base class of every dynd error."""

    kind: str = "error"


class InvalidArgumentError(Error, ValueError):
    """A bad argument: an unknown name or option, a missing value where one is needed."""

    kind = "invalid_argument"


class TypeMismatchError(Error, TypeError):
    """A type that does not fit the operation."""

    kind = "type"


class ValueOverflowError(Error, OverflowError):
    """A value outside the destination type's range."""

    kind = "overflow"


class FractionalError(Error, ValueError):
    """A float to integer conversion that would drop a fractional part."""

    kind = "fractional"


class InexactError(Error, ValueError):
    """A conversion that would change the value."""

    kind = "inexact"


class IndexOutOfBoundsError(Error, IndexError):
    """An index or axis out of range, or too many indices."""

    kind = "index"


class BroadcastError(Error, ValueError):
    """Shapes that do not broadcast together."""

    kind = "broadcast"


class ParseError(Error, ValueError):
    """Malformed text: datashape, JSON, numbers in strings, utf-8."""

    kind = "parse"


class AllocError(Error, MemoryError):
    """Memory could not be allocated."""

    kind = "alloc"


class ExternalError(Error, RuntimeError):
    """An error reported by code outside dynd (a third-party kernel)."""

    kind = "external"


__all__ = [
    "Error",
    "InvalidArgumentError",
    "TypeMismatchError",
    "ValueOverflowError",
    "FractionalError",
    "InexactError",
    "IndexOutOfBoundsError",
    "BroadcastError",
    "ParseError",
    "AllocError",
    "ExternalError",
]
