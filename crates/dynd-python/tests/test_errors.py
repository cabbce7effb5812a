"""The exception classes of DESIGN §11: each a dynd.Error and the matching
builtin, with .kind; what raises each."""

import pytest

import dynd

CLASSES = [
    ("ParseError", ValueError, "parse"),
    ("TypeMismatchError", TypeError, "type"),
    ("ValueOverflowError", OverflowError, "overflow"),
    ("FractionalError", ValueError, "fractional"),
    ("InexactError", ValueError, "inexact"),
    ("IndexOutOfBoundsError", IndexError, "index"),
    ("BroadcastError", ValueError, "broadcast"),
    ("InvalidArgumentError", ValueError, "invalid_argument"),
    ("AllocError", MemoryError, "alloc"),
    ("ExternalError", RuntimeError, "external"),
]


@pytest.mark.parametrize("name, builtin, kind", CLASSES)
def test_class_hierarchy(name, builtin, kind):
    cls = getattr(dynd, name)
    assert issubclass(cls, dynd.Error) and issubclass(cls, builtin)
    assert cls.kind == kind
    # No builtin name is shadowed.
    import builtins

    assert not hasattr(builtins, name)


@pytest.mark.parametrize(
    "cls, action",
    [
        (dynd.ParseError, lambda: dynd.from_json("[1, 2", type="2 * int32")),
        (dynd.TypeMismatchError, lambda: dynd.add(dynd.array([1]), dynd.array(["a"]))),
        (dynd.ValueOverflowError, lambda: dynd.array([300]).cast("int8", errmode="overflow")),
        (dynd.FractionalError, lambda: dynd.array([1.5]).cast("int32", errmode="fractional")),
        (dynd.InexactError, lambda: dynd.array([16777217]).cast("float32", errmode="inexact")),
        (dynd.IndexOutOfBoundsError, lambda: dynd.array([1, 2])[5]),
        (dynd.BroadcastError, lambda: dynd.array([1, 2]) + dynd.array([1, 2, 3])),
        (dynd.InvalidArgumentError, lambda: dynd.callable("no_such_callable")),
    ],
)
def test_what_raises_each(cls, action):
    with pytest.raises(cls) as e:
        action()
    assert e.value.kind == cls.kind
    assert str(e.value)  # a message, never empty


def test_errors_name_the_place():
    with pytest.raises(dynd.ParseError, match=r"line 1, column"):
        dynd.from_json('[1, "x"]', type="2 * int32")
    with pytest.raises(dynd.IndexOutOfBoundsError, match=r"row \[1\]"):
        dynd.array([[1, 2], [3]])[:, 1]
    with pytest.raises(dynd.InvalidArgumentError, match=r"\[1\]"):
        dynd.array([1, None], type="2 * ?int32").cast("2 * int32")
