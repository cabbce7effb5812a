"""Graph optimizations of dynd.dask collections (``Array.__dask_optimize__``).

1. **Culling**: only the tasks the requested keys need.
2. **Column projection**: a reader of records (``from_json``,
   ``from_parquet``) whose partitions are used only through some of their
   fields (``x.id``, ``x["xs"]``) reads only those fields. JSON Lines blocks
   are parsed with the narrower record type: the other fields' values are
   skipped, checked for JSON syntax but not against their types. Parquet
   row groups read only those columns. A reader whose partitions are
   computed themselves, or used any other way (a whole record, a
   ``map_partitions``, a filter of whole records), reads every field.

   ``dask.config.set({"dynd.dask.project-columns": False})`` turns the
   projection off (every field read and checked).
"""

from __future__ import annotations

import operator
from typing import Any

import dask

import dynd

from .core import _SLOT, Call, _cull, element_type, empty

CONFIG = "dynd.dask.project-columns"


def optimize(dsk: Any, keys: Any, **kwargs: Any) -> dict[Any, Any]:
    out = _cull(dsk, keys)
    if dask.config.get(CONFIG, True):
        out = project_columns(out, keys)
    return out


def _field_access(task: Any) -> str | None:
    """The field name when ``task`` is a field of one collection partition."""
    if not isinstance(task, tuple) or len(task) != 2 or not isinstance(task[0], Call):
        return None
    call = task[0]
    if call.func is not operator.getitem or call.kwargs or len(call.template) != 2:
        return None
    slot, name = call.template
    return name if slot is _SLOT and isinstance(name, str) else None


def _is_key(task: Any, keys: dict[Any, Any]) -> bool:
    try:
        return task in keys
    except TypeError:  # unhashable (a tuple holding a list): not a key
        return False


def _refs(task: Any, into: set[Any], keys: dict[Any, Any]) -> None:
    """Adds every key of the graph that ``task`` refers to."""
    if _is_key(task, keys):
        into.add(task)
    elif isinstance(task, (tuple, list)):
        for t in task:
            _refs(t, into, keys)
    elif isinstance(task, dict):
        for t in task.values():
            _refs(t, into, keys)


def _record_type(fields: list[tuple[str, str]]) -> str:
    def name(n: str) -> str:
        if n.isidentifier():
            return n
        return "'" + n.replace("\\", "\\\\").replace("'", "\\'") + "'"

    return "{" + ", ".join(f"{name(n)}: {t}" for n, t in fields) + "}"


def project_columns(dsk: dict[Any, Any], keys: Any) -> dict[Any, Any]:
    """``dsk`` with each record reader narrowed to the fields its
    partitions are used through (see the module's doc)."""
    outputs = set(dask.core.flatten(keys))
    readers: dict[str, list[Any]] = {}
    for k, v in dsk.items():
        if isinstance(k, tuple) and isinstance(v, tuple) and len(v) == 1 and hasattr(v[0], "project"):
            readers.setdefault(k[0], []).append(k)
    if not readers:
        return dsk
    # the fields each reader's partitions are used through; None: used whole
    used: dict[str, set[str] | None] = {r: set() for r in readers}
    for r, ks in readers.items():
        if any(k in outputs for k in ks):
            used[r] = None
    for k, v in dsk.items():
        if isinstance(k, tuple) and k[0] in readers:
            continue
        deps: set[Any] = set()
        _refs(v, deps, dsk)
        hit = [d for d in deps if isinstance(d, tuple) and d[0] in readers]
        if not hit:
            continue
        name = _field_access(v)
        for d in hit:
            seen = used[d[0]]
            if seen is None:
                continue
            if name is None:
                used[d[0]] = None
            else:
                seen.add(name)
    out = dict(dsk)
    for r, names in used.items():
        if not names:
            continue
        elem = dsk[readers[r][0]][0].elem
        fields = dynd.type(elem).fields or []
        if not set(names) < set(fields):
            continue
        meta = empty(elem)
        kept = [(f, element_type(meta[f].type)) for f in fields if f in names]
        narrow = _record_type(kept)
        try:
            narrow = element_type(empty(narrow).type)
        except dynd.Error:
            continue
        for k in readers[r]:
            out[k] = (dsk[k][0].project([f for f, _ in kept], narrow),)
    return out
