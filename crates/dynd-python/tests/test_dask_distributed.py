"""dynd.dask on a distributed LocalCluster: 2 worker processes x 1 thread (one
cluster for the module). Partitions travel between processes pickled with
protocol 5; errors arrive as the same dynd class naming the partition; a
worker killed mid-compute is restarted by its nanny and the result is right."""

from __future__ import annotations

import os
import signal
import time

import pytest

pytest.importorskip("dask")
distributed = pytest.importorskip("distributed")

import dynd  # noqa: E402
import dynd.dask as dd  # noqa: E402
from _dask_helpers import tripling_cfunc  # noqa: E402


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=40
    )
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


RAGGED = [[float(i + j) for j in range(i % 5)] for i in range(400)]


def test_compute_on_worker_processes(client):
    a = dynd.array(RAGGED)
    x = dd.from_dynd(a, npartitions=7)
    y = x[dd.greater(dd.sum(x, axis=-1), 20.0)]
    got = dd.sum(y, axis=-1).compute()
    want = dynd.sum(a[dynd.sum(a, axis=-1) > 20.0], axis=-1)
    assert got.to_list() == want.to_list()
    assert dd.sum(x).compute().to_list() == dynd.sum(a).to_list()
    assert dd.argmax(dd.sum(x, axis=-1)).compute().to_list() == dynd.argmax(dynd.sum(a, axis=-1)).to_list()
    m, v = dd.mean(x).compute(), dd.var(x).compute()
    assert abs(m.to_list() - dynd.mean(a).to_list()) <= 1e-12 * abs(dynd.mean(a).to_list())
    assert abs(v.to_list() - dynd.var(a).to_list()) <= 1e-12 * abs(dynd.var(a).to_list())
    # the tasks ran in the worker processes
    pids = set(client.run(os.getpid).values())
    assert os.getpid() not in pids and len(pids) == 2


def test_kernels_and_callables_travel(client):
    pytest.importorskip("numba")

    @dynd.kernel("(float64) -> float64")
    def half_square(v):
        return v * v * 0.5

    a = dynd.array(RAGGED)
    x = dd.from_dynd(a, npartitions=4)
    assert x.map_partitions(half_square).compute().to_list() == half_square(a).to_list()
    sq = dynd.callable("sqrt")
    assert x.map_partitions(sq).compute().to_list() == dynd.sqrt(a).to_list()
    t = dynd.type("float32")  # dynd types travel too (by their text)
    assert x.map_partitions(lambda p: p.cast(t)).compute().type == "400 * var * float32"
    f = tripling_cfunc()
    with pytest.raises(Exception) as err:  # distributed wraps it in its serialization TypeError
        x.map_partitions(f).compute()
    chain, e = [], err.value
    while e is not None:
        chain.append(e)
        e = e.__cause__ or e.__context__
    assert any(isinstance(c, dynd.InvalidArgumentError) and "cannot travel to another process" in str(c) for c in chain)


def test_records_and_strings_travel(client):
    recs = [{"k": f"key{i % 3}", "xs": [i, -i][: i % 3], "w": None if i % 4 == 0 else float(i)} for i in range(60)]
    a = dynd.array(recs, type="60 * {k: string, xs: var * int64, w: ?float64}")
    x = dd.from_dynd(a, npartitions=5)
    p = x.persist()
    assert p.compute().to_list() == recs
    assert dd.startswith(p.k, "key1").compute().to_list() == dynd.startswith(a.k, "key1").to_list()
    assert dd.sum(p.w).compute().to_list() == dynd.sum(a.w).to_list()


def test_sizeof_on_workers(client):
    a = dynd.array([[1.0] * 100] * 1000)
    x = dd.from_dynd(a, npartitions=2).persist()
    distributed.wait(x)
    sizes = client.run(lambda dask_worker: sum(dask_worker.data.fast.weights.values()) if hasattr(dask_worker.data, "fast") else 0)
    assert sum(sizes.values()) >= 1000 * 100 * 8


def test_errors_arrive_as_the_same_class(client):
    a = dynd.array([1.0, 2.0, 3.0, 1e300])
    x = dd.from_dynd(a, npartitions=2)
    with pytest.raises(dynd.ValueOverflowError, match="partition 1: "):
        x.map_partitions(lambda p: p.cast("int32", errmode="overflow")).compute()
    bad = dd.from_delayed(x.to_delayed(), type="int64")
    with pytest.raises(dynd.TypeMismatchError, match="partition [01]: has type 2 \\* float64"):
        bad.compute()


def _slow(p):
    time.sleep(0.3)
    return p * 2.0


def test_worker_killed_mid_compute(client):
    a = dynd.array(RAGGED)
    x = dd.from_dynd(a, npartitions=12)
    total = dd.sum(x.map_partitions(_slow))
    fut = client.compute(total)
    time.sleep(0.8)  # some partitions are done, others running
    pids = client.run(os.getpid)
    victim = sorted(pids.values())[0]
    os.kill(victim, signal.SIGKILL)
    got = fut.result(timeout=120)
    assert got.to_list() == dynd.sum(a * 2.0).to_list()
    # the nanny brought the worker back
    deadline = time.time() + 60
    while len(client.scheduler_info(n_workers=-1)["workers"]) < 2 and time.time() < deadline:
        time.sleep(0.2)
    assert len(client.scheduler_info(n_workers=-1)["workers"]) == 2
