"""Isolation between principals: nothing outside a caller's visible scopes ever reaches it.

A tokens file of randomized principals (users in several organisations, with agents
some of them share, projects and teams) write knowledge, resources, cognition traces and
memory events into random scopes each may write. Then random callers read through every
read path — knowledge search, list and get; resource get, list and search; trace logs,
trace views and trace lists; memory event search — and every result is checked against
the caller's visible scopes computed here from the token's fields (user:U,
agent:A, project:P..., team:T..., org:O, public). Gets of what the caller cannot see must
be NOT_FOUND or PERMISSION_DENIED; gets of what it can see must succeed.

Agent and resource names are per organisation: the model below keeps every name as the
store does (`agent:o1:bot1`, `o1:iso/u2/r0`; bare for principals without an org) and
turns it into, and back from, the form each caller writes and reads (its own org's bare,
another org's qualified, the shared namespace's as `:name`).
"""

from __future__ import annotations

import collections
import random
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from knowhub import KnowHub, errors

from tests.dream.support import Queue, wait_until
from tests.reliability.conftest import Report, Scale
from tests.support.harness import Harness, write_tokens_file
from tests.support.shared import running_hub

SEED = 3
WORDS = (
    "selenium",
    "login",
    "cookie",
    "retry",
    "proxy",
    "captcha",
    "timeout",
    "parser",
    "invoice",
    "report",
    "deploy",
    "cache",
)
DENIED = {"NOT_FOUND", "PERMISSION_DENIED"}


@dataclass(frozen=True)
class Who:
    """A principal of the tokens file, and the scopes it may see."""

    name: str
    fields: dict[str, Any]

    @property
    def org(self) -> str:
        return str(self.fields.get("org_id", ""))

    def stored(self, name: str) -> str:
        """A name as this principal writes it, as the store keeps it."""
        if name.startswith(":"):
            return name[1:]
        return f"{self.org}:{name}" if self.org and ":" not in name else name

    def read(self, name: str) -> str:
        """A stored name as this principal reads it."""
        if not self.org:
            return name
        if ":" not in name:
            return f":{name}"
        return name.removeprefix(f"{self.org}:")

    def stored_scope(self, value: str) -> str:
        kind, _, entity = value.partition(":")
        return f"agent:{self.stored(entity)}" if kind == "agent" else value

    def read_scope(self, value: str) -> str:
        kind, _, entity = value.partition(":")
        return f"agent:{self.read(entity)}" if kind == "agent" else value

    @property
    def visible(self) -> frozenset[str]:
        """Its visible scopes, as stored."""
        scopes = {f"user:{self.fields['user_id']}", "public"}
        if self.fields.get("agent_id"):
            scopes.add(self.stored_scope(f"agent:{self.fields['agent_id']}"))
        if self.fields.get("org_id"):
            scopes.add(f"org:{self.fields['org_id']}")
        scopes.update(f"project:{p}" for p in self.fields.get("project_ids", []))
        scopes.update(f"team:{t}" for t in self.fields.get("team_ids", []))
        return frozenset(scopes)

    @property
    def user_scope(self) -> str:
        return f"user:{self.fields['user_id']}"

    @property
    def publisher(self) -> bool:
        """Whether it may write knowledge into `public`."""
        return "publisher" in self.fields.get("roles", [])

    def may_write(self, scopes: list[str]) -> bool:
        return self.publisher or "public" not in scopes


def make_principals(rng: random.Random, count: int) -> list[Who]:
    """Users in three organisations (some in none), half with an agent from a pool small
    enough that agents are shared, with zero to two projects and teams each."""
    agents = [f"bot{i}" for i in range(max(2, count // 3))]
    principals = []
    for i in range(count):
        fields: dict[str, Any] = {"user_id": f"u{i}"}
        if rng.random() < 0.85:
            fields["org_id"] = rng.choice(["o1", "o2", "o3"])
        if rng.random() < 0.5:
            fields["agent_id"] = rng.choice(agents)
        fields["project_ids"] = rng.sample([f"p{j}" for j in range(6)], rng.randint(0, 2))
        fields["team_ids"] = rng.sample([f"t{j}" for j in range(6)], rng.randint(0, 2))
        if i % 2:
            fields["roles"] = ["publisher"]
        principals.append(Who(f"u{i}", fields))
    return principals


def some_scopes(rng: random.Random, who: Who) -> list[str]:
    """Scopes the principal may write, as stored."""
    visible = sorted(who.visible)
    return rng.sample(visible, rng.randint(1, min(3, len(visible))))


def text(rng: random.Random) -> str:
    return " ".join(rng.sample(WORDS, 3))


@dataclass
class World:
    """What was written, with the scopes (or owner) it was written to."""

    knowledge: dict[str, list[str]]
    resources: dict[str, list[str]]
    traces: dict[str, str]  # trace id -> owner user scope


def populate(hub: Harness, principals: list[Who], rng: random.Random, per_principal: int) -> World:
    world = World({}, {}, {})
    for who in principals:
        client = hub.client(who.name)
        for i in range(per_principal):
            scopes = [s for s in some_scopes(rng, who) if who.may_write([s])] or [who.user_scope]
            record = client.knowledge.save(
                task=text(rng),
                content=text(rng),
                types=["tool"],
                scopes=[who.read_scope(s) for s in scopes],
            )
            world.knowledge[record.id] = scopes
            resource_id = f"iso/{who.name}/r{i}"
            scopes = some_scopes(rng, who)
            client.resources.save(
                resource_id,
                text(rng),
                text(rng),
                secure_body="s",
                scopes=[who.read_scope(s) for s in scopes],
            )
            world.resources[who.stored(resource_id)] = scopes
            client.memory.remember(
                observations=[f"{who.name} noted {text(rng)}"],
                context={"user_id": f"m{rng.randint(0, 9)}"},
                scope=who.read_scope(rng.choice(sorted(who.visible))),
            )
        trace = f"iso-{who.name}"
        client.cognition.append_events(
            trace,
            [
                {"type": "message", "sequence": 1, "role": "user", "content": text(rng)},
                {"type": "query", "sequence": 1, "query": text(rng)},
            ],
            task=text(rng),
        )
        world.traces[trace] = who.user_scope
    return world


class Tally:
    """Counts reads, results checked, and the two failures: leaks and wrong refusals."""

    def __init__(self) -> None:
        self.reads: collections.Counter[str] = collections.Counter()
        self.results = 0
        self.refused = 0  # gets of invisible items, rightly refused
        self.leaks: list[str] = []
        self.refused_visible: list[str] = []

    def check(self, what: str, who: Who, scopes: list[str]) -> None:
        """A result of a search or list (its scopes as the caller reads them): one of its
        scopes must be visible to the caller."""
        self.results += 1
        if who.visible.isdisjoint(who.stored_scope(s) for s in scopes):
            self.leaks.append(f"{what} in {sorted(scopes)} reached {who.fields}")

    def get(self, what: str, who: Who, visible: bool, read: Callable[[], Any]) -> Any:
        """A read of one item: returns it when allowed, counts a leak when an invisible
        one comes back and a wrong refusal when a visible one does not."""
        try:
            item = read()
        except errors.KnowHubError as error:
            if error.code not in DENIED:
                raise
            if visible:
                self.refused_visible.append(f"{what} refused ({error.code}) to {who.fields}")
            else:
                self.refused += 1
            return None
        self.results += 1
        if not visible:
            self.leaks.append(f"{what} reached {who.fields}")
        return item


def read_once(
    rng: random.Random,
    clients: dict[str, KnowHub],
    principals: list[Who],
    world: World,
    tally: Tally,
) -> None:
    who = rng.choice(principals)
    client = clients[who.name]
    kind = rng.choice(
        [
            "knowledge.search",
            "knowledge.list",
            "knowledge.get",
            "resources.get",
            "resources.list",
            "resources.search",
            "cognition.get_log",
            "cognition.trace_view",
            "cognition.list_traces",
            "memory.search_events",
        ]
    )
    tally.reads[kind] += 1
    if kind == "knowledge.search":
        for hit in client.knowledge.search(text(rng), top_k=rng.randint(1, 50), min_score=1):
            tally.check(f"knowledge {hit.knowledge.id}", who, hit.knowledge.scopes)
    elif kind == "knowledge.list":
        for record in client.knowledge.list(limit=rng.randint(1, 100)):
            tally.check(f"knowledge {record.id}", who, record.scopes)
    elif kind == "knowledge.get":
        record_id, scopes = rng.choice(list(world.knowledge.items()))
        record = tally.get(
            f"knowledge {record_id}",
            who,
            not who.visible.isdisjoint(scopes),
            lambda: client.knowledge.get(record_id),
        )
        if record is not None:
            tally.check(f"knowledge {record_id}", who, record.scopes)
    elif kind == "resources.get":
        stored, scopes = rng.choice(list(world.resources.items()))
        resource_id = who.read(stored)
        resource = tally.get(
            f"resource {resource_id}",
            who,
            not who.visible.isdisjoint(scopes),
            lambda: client.resources.get(resource_id),
        )
        if resource is not None:
            tally.check(f"resource {resource_id}", who, resource.scopes)
    elif kind == "resources.list":
        writer = rng.choice(principals)
        prefix = rng.choice(["", "iso", who.read(writer.stored(f"iso/{writer.name}"))])
        for resource in client.resources.list(prefix=prefix, limit=rng.randint(1, 100)):
            tally.check(f"resource {resource.id}", who, resource.scopes)
    elif kind == "resources.search":
        for hit in client.resources.search(text(rng), top_k=rng.randint(1, 50)):
            tally.check(f"resource {hit.resource.id}", who, hit.resource.scopes)
    elif kind in ("cognition.get_log", "cognition.trace_view"):
        trace, owner = rng.choice(list(world.traces.items()))
        read = client.cognition.get_log if kind.endswith("get_log") else client.cognition.trace_view
        tally.get(f"trace {trace}", who, owner == who.user_scope, lambda: read(trace))
    elif kind == "cognition.list_traces":
        for trace in client.cognition.list_traces(limit=100):
            tally.results += 1
            if trace.owner != who.user_scope:
                tally.leaks.append(f"trace {trace.trace_id} of {trace.owner} reached {who.fields}")
    else:
        for hit in client.memory.search_events(text(rng), top_k=rng.randint(1, 50)):
            tally.check(f"memory event {hit.event.event_id}", who, [hit.event.scope])


@pytest.fixture
def isolation_hub(
    tmp_path: Path, redis_url: str, scale: Scale
) -> Iterator[tuple[Harness, list[Who], str]]:
    principals = make_principals(random.Random(SEED), int(scale.pick(12, 48)))
    tokens = write_tokens_file(tmp_path, {who.name: who.fields for who in principals})
    prefix = f"iso-{uuid.uuid4().hex[:12]}:"
    with pytest.MonkeyPatch.context() as env:
        env.setenv("KNOWHUB_HISTORIAN_POLL_INTERVAL_SECONDS", "0.05")
        env.setenv("KNOWHUB_DREAM_WORKERS", "0")
        with running_hub(tmp_path, tokens=tokens, redis_url=redis_url, redis_prefix=prefix) as hub:
            yield hub, principals, prefix


def test_no_read_crosses_scopes(
    isolation_hub: tuple[Harness, list[Who], str], redis_url: str, scale: Scale, figures: Report
) -> None:
    hub, principals, prefix = isolation_hub
    rng = random.Random(SEED)
    world = populate(hub, principals, rng, per_principal=int(scale.pick(3, 8)))
    Queue(redis_url, prefix).wait_drained(timeout=60)
    some = hub.client(principals[0].name)
    wait_until(
        lambda: some.memory.search_events(" ".join(WORDS), top_k=1), 20, "the historian's events"
    )
    clients = {who.name: hub.client(who.name) for who in principals}
    tally = Tally()
    reads = int(scale.pick(600, 10_000))
    for _ in range(reads):
        read_once(rng, clients, principals, world, tally)

    figures(
        f"{len(principals)} principals wrote {len(world.knowledge)} knowledge records, "
        f"{len(world.resources)} resources, {len(world.traces)} traces and "
        f"{len(world.knowledge)} memory observations; {reads} reads returned "
        f"{tally.results} results: {len(tally.leaks)} outside the caller's scopes; "
        f"{tally.refused} gets of invisible items refused, "
        f"{len(tally.refused_visible)} of visible ones"
    )
    figures("reads by kind: " + ", ".join(f"{k} {n}" for k, n in sorted(tally.reads.items())))
    assert not tally.leaks, tally.leaks[:10]
    assert not tally.refused_visible, tally.refused_visible[:10]
    assert tally.results > reads and tally.refused, "the reads found too little to prove anything"


class Writes:
    """Counts writes by outcome and collects the wrong ones: refused though allowed, or
    refused otherwise than PERMISSION_DENIED, or done though not allowed."""

    def __init__(self) -> None:
        self.tally: collections.Counter[str] = collections.Counter()
        self.wrong: list[str] = []

    def attempt(self, kind: str, what: str, allowed: bool, write: Callable[[], Any]) -> Any:
        """The write's result, or None when it was refused."""
        try:
            result = write()
        except errors.KnowHubError as error:
            self.tally[f"{kind} {error.code}"] += 1
            if allowed or error.code != "PERMISSION_DENIED":
                self.wrong.append(f"{what}: {error.code} {error.message}")
            return None
        self.tally[f"{kind} OK"] += 1
        if not allowed:
            self.wrong.append(f"{what}: done though not allowed")
        return result


def test_no_write_borrows_an_identity(
    isolation_hub: tuple[Harness, list[Who], str], scale: Scale, figures: Report
) -> None:
    """Random callers save naming random agents (their own, another's, none) and delete
    random records they can see: a save acts as an agent only if the caller's token lists
    it, and a delete succeeds only for the record's owner (the user or its agent) or its
    creator. An agent shared by two tokens is shared on purpose; no other is."""
    hub, principals, _prefix = isolation_hub
    rng = random.Random(SEED + 1)
    clients = {who.name: hub.client(who.name) for who in principals}
    pool = sorted({who.fields["agent_id"] for who in principals if who.fields.get("agent_id")})
    records: dict[str, tuple[str, str, list[str]]] = {}  # id -> (owner, creator, scopes)
    writes = Writes()
    for _ in range(int(scale.pick(150, 1500))):
        who = rng.choice(principals)
        own = who.fields.get("agent_id", "")
        named = rng.choice(["", own, *pool])
        scopes = some_scopes(rng, who)
        allowed = named in ("", own) and who.may_write(scopes)
        saved = writes.attempt(
            "save",
            f"{who.fields} naming {named!r} into {scopes}",
            allowed,
            lambda w=who, n=named, s=scopes: clients[w.name].knowledge.save(
                task=text(rng), content=text(rng), types=["tool"], scopes=s, agent_id=n
            ),
        )
        if saved is None:
            continue
        expected = f"agent:{named or own}" if named or own else who.user_scope
        if saved.owner != expected:
            writes.wrong.append(f"{who.fields} naming {named!r} saved as {saved.owner}")
        records[saved.id] = (who.stored_scope(saved.owner), who.user_scope, scopes)
    for _ in range(int(scale.pick(150, 1500))):
        who = rng.choice(principals)
        visible = [i for i, (_, _, scopes) in records.items() if not who.visible.isdisjoint(scopes)]
        if not visible:
            continue
        record_id = rng.choice(visible)
        owner, creator, _ = records[record_id]
        own = who.fields.get("agent_id", "")
        allowed = (
            owner in (who.user_scope, who.stored_scope(f"agent:{own}") if own else "")
            or creator == who.user_scope
        )
        deleted = writes.attempt(
            "delete",
            f"{who.fields} deleting {owner}'s (creator {creator}) {record_id}",
            allowed,
            lambda w=who, r=record_id: clients[w.name].knowledge.delete(r) or True,
        )
        if deleted:
            del records[record_id]
    tally = writes.tally
    figures("identity writes: " + ", ".join(f"{k} {n}" for k, n in sorted(tally.items())))
    assert not writes.wrong, writes.wrong[:10]
    assert (
        tally["save PERMISSION_DENIED"] and tally["delete PERMISSION_DENIED"] and tally["delete OK"]
    ), tally
