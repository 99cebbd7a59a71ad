"""How records are stored: the JSON documents (whatever a payload holds reads back exactly
as the standard json module writes and reads it, and documents an earlier version wrote
through orjson still read) and the point ids."""

from __future__ import annotations

import hashlib
import json
import uuid
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from knowhub_server.common.storage.vectors import (
    CollectionSchema,
    Record,
    _dump_json,
    _load_json,
    point_id,
    record_from_payload,
    stored_payload,
)

scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**64 - 1)
    | st.integers()
    | st.floats()
    | st.text()
)
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text() | st.integers(), inner, max_size=4)
    ),
    max_leaves=12,
)


def standard_round_trip(value: Any) -> Any:
    return json.loads(json.dumps(value, ensure_ascii=False, separators=(",", ":")))


@settings(max_examples=500)
@given(values)
def test_documents_read_back_as_the_standard_json_module_reads_them(value: Any) -> None:
    # repr: NaN is not equal to itself, and -0.0 equals 0.0
    assert repr(_load_json(_dump_json(value))) == repr(standard_round_trip(value))


def test_values_json_alone_can_write_read_back_as_it_reads_them() -> None:
    value = {
        "nan": float("nan"),
        "inf": float("-inf"),
        "big": 2**70,
        "none": None,
        "surrogate": "\ud800",
        7: "int key",
        "text": "null and void",
    }
    assert repr(_load_json(_dump_json(value))) == repr(standard_round_trip(value))


def test_documents_an_earlier_version_wrote_through_orjson_still_read() -> None:
    # orjson's own output (UTF-8 text unescaped), and what it left to the standard encoder,
    # marked with a leading space
    written_by_orjson = (
        '{"text":"héllo 中文 \\"q\\"","n":18446744073709551615,"x":1e300,"_key":"k"}'
    )
    left_to_json = ' {"nan":NaN,"big":1180591620717411303424,"none":null,"7":"int key"}'
    assert _load_json(written_by_orjson) == {
        "text": 'héllo 中文 "q"',
        "n": 2**64 - 1,
        "x": 1e300,
        "_key": "k",
    }
    back = _load_json(left_to_json)
    assert repr(back) == repr({"nan": float("nan"), "big": 2**70, "none": None, "7": "int key"})


def test_a_stored_record_reads_back_unchanged() -> None:
    schema = CollectionSchema(
        name="things", keyword_fields=("tags",), integer_fields=("n",), bulk_fields=("history",)
    )
    payload = {
        "tags": ["a", "b"],
        "n": 3,
        "text": 'héllo \u4e2d\u6587 "quoted"',
        "nested": {"x": [1.5, -0.0, 1e300], "empty": {}},
        "history": [{"k": 1}],
    }
    record = Record(
        key="key-1", payload=payload, version=4, write_token=2**62 - 1, recent_writes=(2**62 - 1, 5)
    )
    back = record_from_payload(stored_payload(record, schema))
    assert (back.key, back.payload, back.version, back.write_token, back.recent_writes) == (
        "key-1",
        payload,
        4,
        2**62 - 1,
        (2**62 - 1, 5),
    )


@given(st.text(st.characters(blacklist_categories=("Cs",))))
def test_point_ids_are_the_uuid_of_the_keys_digest_as_stores_hold_them(key: str) -> None:
    digest = hashlib.blake2b(key.encode(), digest_size=16, person=b"knowhub.key").digest()
    assert point_id(key) == str(uuid.UUID(bytes=digest))


def test_a_known_key_keeps_its_point_id() -> None:
    assert point_id("knowledge-20231114-f2f90448aaf1") == "c2eeecf6-5f26-8841-6a62-6c2e5f03321b"
