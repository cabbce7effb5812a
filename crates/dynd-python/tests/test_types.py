"""dynd.Type: datashape text in and out, equality, layout properties."""

import pytest

import dynd


def test_canonical_text_and_equality():
    t = dynd.type("3*var*{x:int32,s:?string}")
    assert str(t) == "3 * var * {x: int32, s: ?string}"
    assert t == "3 * var * {x: int32, s: ?string}"
    assert t == dynd.type("3 * var * {x: int32, s: ?string}")
    assert t != "3 * var * {x: int64, s: ?string}"
    assert t != "not a type ("  # bad text is unequal, not an error
    assert t != 3
    assert repr(t) == 'dynd.type("3 * var * {x: int32, s: ?string}")'
    assert dynd.type(t) == t and dynd.Type("int8") == "int8"


def test_hash_agrees_with_equality():
    assert hash(dynd.type("3 * int32")) == hash(dynd.type("3*int32"))
    assert len({dynd.type("int8"), dynd.type("int8"), dynd.type("int16")}) == 2


@pytest.mark.parametrize(
    "text, size, align, ndim",
    [("int32", 4, 4, 0), ("3 * int32", 12, 4, 1), ("2 * 3 * float64", 48, 8, 2), ("var * int8", 16, 8, 1)],
)
def test_layout(text, size, align, ndim):
    t = dynd.type(text)
    assert (t.data_size, t.data_alignment, t.ndim) == (size, align, ndim)
    assert t.arrmeta_size >= 0


def test_fields():
    assert dynd.type("2 * {a: int8, b: string}").fields == ["a", "b"]
    assert dynd.type("?{a: int8}").fields == ["a"]
    assert dynd.type("int8").fields is None


def test_bad_text_is_a_parse_error_naming_the_place():
    with pytest.raises(dynd.ParseError) as e:
        dynd.type("3 * ")
    assert e.value.kind == "parse"
    assert "column" in str(e.value)
    assert isinstance(e.value, ValueError) and isinstance(e.value, dynd.Error)


def test_a_type_argument_must_be_text_or_a_type():
    with pytest.raises(dynd.TypeMismatchError):
        dynd.type(3)
    with pytest.raises(dynd.TypeMismatchError):
        dynd.array([1], type=3.5)


def test_the_type_stubs_name_every_public_function():
    import pathlib
    import re

    stub = (pathlib.Path(dynd.__file__).parent / "__init__.pyi").read_text()
    assert (pathlib.Path(dynd.__file__).parent / "py.typed").exists()
    names = set(dynd.callable_names()) | set(dynd.__all__)
    missing = [n for n in sorted(names) if not re.search(rf"^(def|class) {n}\b|^{n} =|as {n}$", stub, re.M)]
    assert missing == []
