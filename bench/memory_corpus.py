"""Text for the memory benchmarks: the labelled conversation set and a generator of engineering chatter.

The labelled set (bench/data/conversations.txt, bench/data/queries.txt) is hand-written; the
generator produces any number of varied, plausible messages (plans, reviews, bug reports, design
arguments) from a large vocabulary, for timing searches at 10k–100k chunks.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"


@dataclass(frozen=True)
class Message:
    """One message of the labelled set."""

    id: str
    thread: str
    speaker: str
    text: str


@dataclass(frozen=True)
class Query:
    """A question and the ids of the messages that answer it."""

    id: str
    kind: str
    relevant: frozenset[str]
    text: str


def load_conversations(path: Path = DATA / "conversations.txt") -> list[Message]:
    """Parse the "## thread" / "[id] speaker: text" format; continuation lines belong to the message."""
    messages: list[Message] = []
    thread = ""
    current: dict[str, str] | None = None

    def flush() -> None:
        if current is not None:
            messages.append(Message(current["id"], current["thread"], current["speaker"],
                                    current["text"].strip()))

    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("## "):
            flush()
            current = None
            thread = line[3:].split(" — ")[0].strip()
        elif line.startswith("[") and "] " in line and ":" in line:
            flush()
            ident, rest = line[1:].split("] ", 1)
            speaker, text = rest.split(":", 1)
            current = {"id": ident, "thread": thread, "speaker": speaker, "text": text.strip()}
        elif current is not None:
            current["text"] += "\n" + line
        # lines before the first message (comments) are ignored
    flush()
    ids = [m.id for m in messages]
    if len(ids) != len(set(ids)):
        raise ValueError("duplicate message ids in the labelled set")
    return messages


def load_queries(path: Path = DATA / "queries.txt") -> list[Query]:
    """Parse "<id> | <kind> | <relevant ids> | <query>" lines."""
    queries = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        ident, kind, relevant, text = (part.strip() for part in line.split("|", 3))
        queries.append(Query(ident, kind, frozenset(relevant.split()), text))
    return queries


PEOPLE = ["maya", "dev", "priya", "tomas", "leo", "sara", "jun", "ana", "kenji", "farah", "omar", "nadia",
          "felix", "ines", "ravi", "yuki", "chen", "lena", "marco", "zoe", "amir", "olga", "pablo", "hana"]
COMPONENTS = [
    "billing service", "checkout flow", "search indexer", "auth gateway", "notification worker", "report exporter",
    "image resizer", "session store", "rate limiter", "feature-flag client", "webhook dispatcher", "audit log",
    "inventory API", "pricing engine", "admin dashboard", "mobile sync", "CSV importer", "PDF renderer",
    "GraphQL layer", "job scheduler", "cache warmer", "email sender", "payment adapter", "tax calculator",
    "recommendation model", "analytics pipeline", "tenant router", "file uploader", "websocket hub", "CDN config",
    "migration runner", "backup job", "config loader", "metrics exporter", "trace collector", "ledger service",
    "shipping quote API", "coupon validator", "translation loader", "permission checker", "onboarding wizard",
]
SYMPTOMS = [
    "times out under load", "returns stale data", "leaks memory slowly", "deadlocks on startup",
    "drops messages during deploys", "double-processes events", "logs personal data", "ignores the retry header",
    "spikes CPU every few minutes", "fails only on the first request after idle", "corrupts non-ASCII filenames",
    "sorts dates as strings", "holds a lock across a network call", "breaks on daylight saving changes",
    "exhausts the connection pool", "returns 500 instead of 404", "loses the trace context in jobs",
    "renders the wrong currency symbol", "crashes on empty input", "uses the wrong timezone for reports",
    "reads the whole table for one row", "caches responses per user forever", "retries non-idempotent requests",
    "blocks the event loop while parsing", "sends duplicate notifications", "writes temp files to a shared path",
]
CAUSES = [
    "a missing index on the foreign key", "an unbounded in-process cache", "a race between two workers",
    "the default timeout of the HTTP client", "an N+1 query in the serializer", "a stale read replica",
    "clock skew between nodes", "an off-by-one in the pagination cursor", "a regex with catastrophic backtracking",
    "the ORM loading every column", "a retry loop without jitter", "a config value read once at import",
    "floating point rounding in the conversion", "a global mutable default argument", "a silent exception handler",
    "a lock ordering inversion", "the connection not being returned to the pool", "an expired service token",
    "the scheduler running on every replica", "a mis-set cache key that ignores the locale",
]
ACTIONS = [
    "add a composite index", "move the work to a background job", "batch the writes in chunks of a thousand",
    "put a circuit breaker in front of it", "switch to keyset pagination", "add jitter to the backoff",
    "make the handler idempotent with a request key", "stream the response instead of buffering it",
    "cap the cache and evict by age", "split the migration into expand and contract steps",
    "pin the dependency and add a regression test", "store times as UTC with the zone name",
    "take an advisory lock per job", "validate the payload at the edge", "add a property-based test",
    "measure it with a flame graph first", "put it behind a feature flag at ten percent",
    "write a runbook entry for on-call", "normalize the text to NFC before comparing", "drop the column in a later release",
]
TOOLS = ["tracemalloc", "py-spy", "EXPLAIN ANALYZE", "the slow query log", "Grafana", "the trace view", "k6",
         "pgbadger", "a heap dump", "strace", "the browser profiler", "Sentry", "hypothesis", "git bisect",
         "the access logs", "a canary deploy", "perf", "the load balancer metrics", "tcpdump", "the audit table"]
FILES = ["api/handlers.py", "core/billing.py", "workers/export.py", "search/indexer.py", "auth/tokens.py",
         "sync/merge.ts", "db/migrations/0142_orders.py", "ui/Checkout.tsx", "jobs/schedule.py", "lib/retry.go",
         "services/tax.py", "config/settings.py", "reports/render.py", "storage/s3.py", "cache/keys.py"]
REVIEW_NOTES = [
    "catches Exception and hides the real error", "needs a test for the empty case",
    "builds SQL with string formatting", "should not log the token", "reads the setting at import time",
    "has a loop that is quadratic in the number of rows", "mutates the argument it was given",
    "misses the timezone when parsing", "duplicates the helper in utils", "holds the transaction open too long",
    "should use the existing client instead of a new session", "swallows the cancellation",
]
NUMBERS = ["3", "5", "12", "40", "250", "1,200", "9", "30", "99.9", "15", "64", "2", "18", "700", "8"]
UNITS = ["ms", "seconds", "minutes", "percent", "MB", "requests per second", "rows", "retries", "pods"]


def _labelled_sentences() -> list[str]:
    """Sentences of the hand-written set, for the generator's vocabulary."""
    sentences: list[str] = []
    for message in load_conversations():
        for line in message.text.splitlines():
            sentences += [part.strip() + "." for part in line.split(". ") if len(part.strip()) > 20]
    return sentences


class ConversationGenerator:
    """Deterministic, varied engineering messages: bug reports, findings, plans, reviews, decisions.

    Template sentences over a large vocabulary are mixed with sentences of the hand-written set
    and with identifiers (files, functions, tickets, versions), so that term frequencies resemble
    a real project's rather than a small word list's.
    """

    def __init__(self, seed: int = 1) -> None:
        self._rng = random.Random(seed)
        self._borrowed = _labelled_sentences()

    def _identifier(self) -> str:
        kind = self._rng.randrange(4)
        stem = self._pick(["retry", "cache", "token", "export", "sync", "quota", "ledger", "tenant", "render",
                           "webhook", "cursor", "schema", "index", "budget", "session", "payload"])
        if kind == 0:
            return f"`{stem}_{self._pick(['policy', 'state', 'window', 'limit', 'key', 'queue'])}_{self._rng.randint(1, 99)}()`"
        if kind == 1:
            return f"#{self._rng.randint(1000, 9999)}"
        if kind == 2:
            return f"v{self._rng.randint(1, 9)}.{self._rng.randint(0, 40)}.{self._rng.randint(0, 9)}"
        return f"`{stem}/{self._pick(FILES).split('/')[-1]}`"

    def _pick(self, items: list[str]) -> str:
        return self._rng.choice(items)

    def _number(self) -> str:
        return f"{self._pick(NUMBERS)} {self._pick(UNITS)}"

    def sentence(self) -> str:
        """One sentence in one of several registers."""
        kind = self._rng.randrange(12)
        if kind >= 8:  # a third of the sentences come from the hand-written conversations
            borrowed = self._pick(self._borrowed)
            return borrowed if kind < 11 else f"{borrowed[:-1]} (see {self._identifier()})."
        c, s = self._pick(COMPONENTS), self._pick(SYMPTOMS)
        if kind == 0:
            return f"The {c} {s} since the last release, about {self._number()} worse than before."
        if kind == 1:
            return f"I looked at {self._pick(TOOLS)} and the cause is {self._pick(CAUSES)} in the {c}."
        if kind == 2:
            return f"Proposal: {self._pick(ACTIONS)} for the {c}, so that it no longer {s}."
        if kind == 3:
            return f"Review note on {self._pick(FILES)} line {self._rng.randint(5, 900)}: it {self._pick(REVIEW_NOTES)}."
        if kind == 4:
            return (f"I'd rather {self._pick(ACTIONS)} than {self._pick(ACTIONS)}; the second one costs "
                    f"{self._number()} and still leaves {self._pick(CAUSES)}.")
        if kind == 5:
            return f"After the fix the {c} went from {self._number()} to {self._number()} in {self._pick(TOOLS)}."
        if kind == 6:
            return (f"@{self._pick(PEOPLE)} can you check whether the {self._pick(COMPONENTS)} has the same "
                    f"problem? It also {self._pick(SYMPTOMS)}.")
        return f"Decision: we {self._pick(ACTIONS)} and revisit in {self._rng.randint(1, 6)} weeks."

    def message(self, max_chars: int = 2_000) -> str:
        """A message of one to a few paragraphs (mostly 100–1,500 characters)."""
        paragraphs = []
        for _ in range(self._rng.choice((1, 1, 1, 2, 2, 3))):
            paragraphs.append(" ".join(self.sentence() for _ in range(self._rng.randint(1, 5))))
        return "\n\n".join(paragraphs)[:max_chars]

    def question(self) -> str:
        """A question a user might type into project search."""
        kind = self._rng.randrange(4)
        if kind == 0:
            return f"the {self._pick(COMPONENTS)} {self._pick(SYMPTOMS)}, why?"
        if kind == 1:
            return f"what did we decide about {self._pick(CAUSES)}"
        if kind == 2:
            return f"who suggested we {self._pick(ACTIONS)} for the {self._pick(COMPONENTS)}"
        return f"{self._pick(COMPONENTS)} {self._pick(SYMPTOMS).split()[0]} {self._pick(TOOLS)}"
