"""The CUDA names of DESIGN §14. Without a device (CI): the no-device
behaviour. With one (scripts/gpu-check.sh): round trips, calls on the
device, and the refusals."""

import numpy as np
import pytest

import dynd

HAS_GPU = dynd.cuda.is_available()
gpu = pytest.mark.skipif(not HAS_GPU, reason="SKIP: no CUDA device")


def test_host_arrays_are_on_the_cpu():
    a = dynd.array([1, 2, 3])
    assert a.device == "cpu"
    assert a.to("cpu").device == "cpu"
    assert a.cpu().device == "cpu"
    assert a.__dlpack_device__() == (1, 0)
    assert dynd.array([1.5], device="cpu").device == "cpu"


def test_bad_device_names_are_invalid_arguments():
    a = dynd.array([1, 2, 3])
    for bad in ["gpu", "cuda:", "cuda:x", "", "cuda:-1"]:
        with pytest.raises(dynd.InvalidArgumentError, match="unknown device"):
            a.to(bad)
    with pytest.raises(dynd.InvalidArgumentError):
        dynd.array([1], device="tpu")
    with pytest.raises(TypeError):
        a.to(0)


@pytest.mark.skipif(HAS_GPU, reason="this machine has a CUDA device")
def test_without_a_device_to_cuda_says_why():
    assert dynd.cuda.is_available() is False
    assert dynd.cuda.device_count() == 0
    a = dynd.array([1.0, 2.0])
    with pytest.raises(dynd.ExternalError, match="CUDA"):
        a.to("cuda")
    with pytest.raises(dynd.ExternalError):
        dynd.array([1.0, 2.0], device="cuda:0")
    # Nothing was half-made: the host array is untouched.
    assert a.device == "cpu"
    assert (np.asarray(a) == [1.0, 2.0]).all()


@gpu
def test_round_trips_and_views_stay_on_the_device():
    x = np.arange(24, dtype=np.float64).reshape(4, 6)
    d = dynd.array(x, device="cuda")
    assert d.device == "cuda:0"
    assert d.__dlpack_device__() == (2, 0)
    np.testing.assert_array_equal(np.asarray(d.cpu()), x)
    v = d[::-1, 1::2]
    assert v.device == "cuda:0"
    np.testing.assert_array_equal(np.asarray(v.cpu()), x[::-1, 1::2])
    assert d.to("cuda:0") is not None


@gpu
def test_functions_run_on_the_device_and_match_the_host():
    rng = np.random.default_rng(0)
    a = rng.standard_normal(1000)
    b = rng.standard_normal(1000)
    da, db = dynd.array(a, device="cuda"), dynd.array(b, device="cuda")
    r = da * db + 1.0
    assert r.device == "cuda:0"
    np.testing.assert_array_equal(np.asarray(r.cpu()), a * b + 1.0)
    m = dynd.array([1, None, 3], type="3 * ?int32", device="cuda")
    assert (m + 1).cpu().to_json() == "[2,null,4]"
    with pytest.raises(dynd.InvalidArgumentError, match="division by zero"):
        dynd.array([1, 2], type="2 * int32", device="cuda") // 0
    w = dynd.where(da > 0.0, da, 0.0)
    assert w.device == "cuda:0"
    np.testing.assert_array_equal(np.asarray(w.cpu()), np.where(a > 0.0, a, 0.0))


@gpu
def test_numpy_conversion_of_a_device_array_is_a_type_error_naming_it():
    d = dynd.array([1.0, 2.0], device="cuda")
    with pytest.raises(TypeError, match="cuda:0"):
        np.asarray(d)


@gpu
def test_mixing_devices_is_refused():
    d = dynd.array([1.0, 2.0], device="cuda")
    h = dynd.array([1.0, 2.0])
    with pytest.raises(dynd.InvalidArgumentError, match="mixes devices"):
        d + h


class FakeCudaArray:
    """A producer of the CUDA array interface whose address is never read
    (nothing on the host may dereference device memory)."""

    def __init__(self, **changes):
        self.__cuda_array_interface__ = {
            "version": 3,
            "shape": (2, 3),
            "typestr": "<f8",
            "data": (0x7F0000000000, False),
            "strides": None,
            "stream": None,
        }
        self.__cuda_array_interface__.update(changes)


@pytest.mark.skipif(HAS_GPU, reason="the fake address would be asked of a real driver")
def test_a_cuda_array_interface_comes_in_as_a_device_array_without_reading_it():
    import gc
    import weakref

    src = FakeCudaArray()
    alive = weakref.ref(src)
    d = dynd.asarray(src)
    assert d.device == "cuda:0"
    assert str(d.type) == "2 * 3 * float64"
    cai = d.__cuda_array_interface__
    assert cai["data"] == (0x7F0000000000, False)
    assert cai["strides"] == (24, 8)
    assert cai["typestr"] == "<f8"
    # Views stay on the device and describe their own layout.
    v = d[::-1]
    assert v.__cuda_array_interface__["data"][0] == 0x7F0000000000 + 24
    assert v.__cuda_array_interface__["strides"] == (-24, 8)
    # Without a runtime nothing reads it: clear errors instead.
    with pytest.raises(TypeError, match="cuda:0"):
        np.asarray(d)
    with pytest.raises(dynd.ExternalError):
        d.cpu()
    with pytest.raises(dynd.ExternalError):
        d + 1.0
    assert "cuda:0" in repr(d)
    # DLPack out: a CUDA consumer names its stream; the device must match.
    assert d.__dlpack_device__() == (2, 0)
    cap = d.__dlpack__(stream=7, max_version=(1, 0))
    assert "dltensor" in repr(cap)
    with pytest.raises(BufferError, match="cannot export to device"):
        d.__dlpack__(dl_device=(1, 0))
    del cap
    # The producer stays alive while any array over its memory does.
    del src, cai
    gc.collect()
    assert alive() is not None
    del d, v
    gc.collect()
    assert alive() is None


def test_host_arrays_have_no_cuda_array_interface():
    a = dynd.array([1.0, 2.0])
    assert not hasattr(a, "__cuda_array_interface__")


@pytest.mark.parametrize(
    "changes, error, match",
    [
        ({"version": 4}, dynd.InvalidArgumentError, "version 4"),
        ({"mask": object()}, dynd.InvalidArgumentError, "mask"),
        ({"typestr": ">f8"}, dynd.TypeMismatchError, "typestr"),
        ({"typestr": "<V8"}, dynd.TypeMismatchError, "typestr"),
        ({"stream": 0}, dynd.InvalidArgumentError, "stream 0"),
        ({"data": (0x7F0000000004, False)}, dynd.InvalidArgumentError, "aligned"),
    ],
)
def test_bad_cuda_array_interfaces_are_refused(changes, error, match):
    with pytest.raises(error, match=match):
        dynd.asarray(FakeCudaArray(**changes))


@gpu
def test_cupy_arrays_come_in_and_go_out_without_copies():
    cupy = pytest.importorskip("cupy")
    x = cupy.arange(12, dtype=cupy.float64).reshape(3, 4)
    d = dynd.asarray(x)
    assert d.device == "cuda:0"
    assert d.__cuda_array_interface__["data"][0] == x.data.ptr
    y = cupy.asarray(d)
    assert y.data.ptr == x.data.ptr
    r = cupy.asarray(d * 2.0)
    cupy.testing.assert_array_equal(r, x * 2.0)
    t = dynd.from_dlpack(x)
    assert t.device == "cuda:0"


@gpu
def test_cuda_torch_tensors_come_in_and_go_out_without_copies():
    torch = pytest.importorskip("torch")
    x = torch.arange(6, dtype=torch.float64, device="cuda").reshape(2, 3)
    d = dynd.from_dlpack(x)
    assert d.device == "cuda:0"
    assert d.__dlpack_device__() == (2, 0)
    y = torch.from_dlpack(d)
    assert y.data_ptr() == x.data_ptr()
    assert torch.equal(torch.from_dlpack(d + 1.0), x + 1.0)
