"""Running a roundtable (spec §5): seats answer a topic round after round in a branch of mode ``roundtable``.

**Sequential**: seats speak in order; each sees this round's earlier answers (unless blind).
**Deliberative**: every seat at once, one subprocess or request each (asyncio tasks); none sees
this round's other answers; each answer is stored the moment it finishes. Every seat is its own
engine turn with its own prompt (:mod:`tunaflow_tui.core.roundtable.seat_prompts`), streamed into the
shadow conversation like any turn, read-only in the project directory.

Controls, for the app and scripts alike: :meth:`Roundtable.run_round` (the next round),
:meth:`Roundtable.stop`, :meth:`Roundtable.cancel_seat` (the others go on),
:meth:`Roundtable.rerun_seat` (replaces only that seat's answer), :meth:`Roundtable.add_seat` /
:meth:`Roundtable.remove_seat` and :meth:`Roundtable.add_user_message` between rounds, and the
optional anonymous peer ranking (:mod:`.roundtable_ranking`). A seat that fails (missing CLI,
rejected key, timeout, crash) is recorded on that seat; the round completes with the others.
After every round the brief (Key Positions, no model call) is stored as a ``roundtable_brief``
memo: adopting the branch inserts it.
"""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tunaflow_tui.agents.agent_events import ErrorKind
from tunaflow_tui.agents.base import Engine, PermissionProfile, TurnRequest
from tunaflow_tui.core.markers import Consensus, parse_markers
from tunaflow_tui.core.roundtable.brief import BRIEF_MEMO_KIND, Position, build_brief, plain_text
from tunaflow_tui.core.roundtable.ranking import RankingResult
from tunaflow_tui.core.roundtable.references import responds_to
from tunaflow_tui.core.roundtable.seat_prompts import PromptParts, SpokenAnswer, build_seat_prompt
from tunaflow_tui.core.roundtable.seats import SYNTHESIZER, RoundtableSetup, Seat, SeatSpecError, check_unique
from tunaflow_tui.core.storage.leases import TurnInProgress
from tunaflow_tui.core.storage.records import BranchRecord, MessageRecord
from tunaflow_tui.core.terminal_text import neutralize
from tunaflow_tui.runtime.branching import branch_of
from tunaflow_tui.runtime.events import MessageAdded
from tunaflow_tui.runtime.leftovers import AgentStillRunning
from tunaflow_tui.runtime.roundtable_context import EarlierRoundsRecall, StoredAnswer, runtime_minimal_context
from tunaflow_tui.runtime.roundtable_ranking import rank
from tunaflow_tui.runtime.roundtable_records import (
    ANSWER_KIND,
    SETUP_MEMO_KIND,
    TOPIC_KIND,
    USER_KIND,
    RoundFinished,
    RoundResult,
    RoundStarted,
    RoundtableEvent,
    RoundtableNotice,
    RoundtableObserver,
    SeatAnswer,
    SeatFinished,
    SeatStarted,
)
from tunaflow_tui.runtime.roundtable_text import RoundtableError as RoundtableError
from tunaflow_tui.runtime.roundtable_text import plain_text_keep_lines, system_text
from tunaflow_tui.runtime.tokens import default_counter

if TYPE_CHECKING:
    from tunaflow_tui.core.memory.embedding_port import TextEmbedder
    from tunaflow_tui.runtime.runtime import WorkflowRuntime

CANCELLED_BY_USER = "cancelled by you"
STOPPED_BY_USER = "stopped by you"
LABEL_CHARS = 48
_MESSAGES_READ = 100_000


@dataclass(frozen=True, slots=True)
class _Prepared:
    seat: Seat
    prompt: str
    tokens: int
    compressed: bool


class Roundtable:
    """One roundtable branch and the controls over its rounds (one instance per open roundtable)."""

    def __init__(self, rt: WorkflowRuntime, branch: BranchRecord, setup: RoundtableSetup, *,
                 embedder: TextEmbedder | None = None, observer: RoundtableObserver | None = None) -> None:
        self.rt = rt
        self.branch = branch
        self.setup = setup
        self._observers: list[RoundtableObserver] = [observer] if observer else []
        if embedder is None:
            embedder = rt.memory.embedder
        self.recall = EarlierRoundsRecall(rt.store, embedder)
        self._told_full_transcript = False
        self._running_round: int | None = None
        self._tasks: dict[str, asyncio.Task[SeatAnswer]] = {}
        self._stopping = False
        self._stop_reason = STOPPED_BY_USER
        self._engines: dict[tuple[str, str], Engine] = {}
        self._embedding: set[asyncio.Task[None]] = set()
        self._prefetch = True

    # ------------------------------------------------------------------ creation
    @classmethod
    def convene(cls, rt: WorkflowRuntime, setup: RoundtableSetup, *, conversation_id: str = "main",
                checkpoint_id: int | None = None, label: str | None = None, embedder: TextEmbedder | None = None,
                observer: RoundtableObserver | None = None) -> Roundtable:
        """Open a new roundtable branch of ``conversation_id`` on ``setup`` (the topic is its first message).

        Raises :class:`SeatSpecError` for a seat whose engine is not configured (nothing is created).
        """
        for seat in setup.seats:
            check_engine(rt, seat.engine)
        parent_branch = None
        if conversation_id != "main":
            parent_branch = branch_of(rt, conversation_id).id
        text = " ".join(neutralize(label if label else setup.topic).split())
        if not label and len(text) > LABEL_CHARS:
            text = text[: LABEL_CHARS - 1] + "…"
        branch = rt.store.create_branch(conversation_id=conversation_id, checkpoint_id=checkpoint_id,
                                        parent_branch_id=parent_branch, mode="roundtable", kind="general",
                                        label=text or "roundtable")
        rt.store.add_memo(SETUP_MEMO_KIND, json.dumps(setup.to_json(), ensure_ascii=False), branch_id=branch.id,
                          conversation_id=branch.shadow_conversation_id)
        topic = rt.store.add_message(branch.shadow_conversation_id, "user", setup.topic, meta={"kind": TOPIC_KIND})
        rt.emit(MessageAdded(branch.shadow_conversation_id, topic.id, "user"))
        rt.progress(f"Convened roundtable {branch.id} with {len(setup.seats)} seats ({setup.mode}).")
        return cls(rt, branch, setup, embedder=embedder, observer=observer)

    @classmethod
    def open(cls, rt: WorkflowRuntime, ref: str | int, *, embedder: TextEmbedder | None = None,
             observer: RoundtableObserver | None = None) -> Roundtable:
        """The roundtable of an existing branch (its latest set-up); BranchError if it is not a roundtable."""
        branch = branch_of(rt, ref)
        memos = rt.store.list_memos(kind=SETUP_MEMO_KIND, branch_id=branch.id)
        if branch.mode != "roundtable" or not memos:
            raise RoundtableError(f"branch {branch.id} is not a roundtable")
        setup = RoundtableSetup.from_json(json.loads(memos[-1].content))
        return cls(rt, branch, setup, embedder=embedder, observer=observer)

    # ------------------------------------------------------------------ reading
    @property
    def conversation_id(self) -> str:
        """The shadow conversation the seats speak into."""
        return self.branch.shadow_conversation_id

    @property
    def running(self) -> bool:
        """Whether a round (or a re-run) is in progress."""
        return self._running_round is not None or bool(self._tasks)

    def subscribe(self, observer: RoundtableObserver) -> None:
        """Receive every roundtable event."""
        self._observers.append(observer)

    def emit(self, event: RoundtableEvent) -> None:
        for observer in list(self._observers):
            try:
                observer(event)
            except Exception:  # an observer's failure never stops a round
                continue

    def messages(self) -> tuple[MessageRecord, ...]:
        """Every message of the roundtable, oldest first."""
        return self.rt.store.list_messages(self.conversation_id, limit=_MESSAGES_READ)

    def answers(self) -> tuple[SeatAnswer, ...]:
        """Every stored seat answer, by round then speaking order."""
        order = {seat.name: i for i, seat in enumerate(self.setup.seats)}
        found = [SeatAnswer(m) for m in self.messages() if m.meta.get("kind") == ANSWER_KIND]
        return tuple(sorted(found, key=lambda a: (a.round, order.get(a.seat, len(order)), a.message.id)))

    def user_turns(self) -> tuple[tuple[int, str], ...]:
        """The user's messages between rounds, as ``(round, text)``."""
        return tuple((int(str(m.meta.get("round", 0))), m.content) for m in self.messages()
                     if m.meta.get("kind") == USER_KIND)

    def last_round(self) -> int:
        """The latest round in which seats spoke; 0 before the first.

        Only the seats' rounds count: the user's word and a peer ranking happen between rounds and take
        no number of their own, so rounds read 1, 2, 3 however often the user speaks in between.
        """
        return max(self.seat_rounds(), default=0)

    def seat_rounds(self) -> tuple[int, ...]:
        """The rounds in which seats spoke, in order."""
        return tuple(sorted({answer.round for answer in self.answers()}))

    # ------------------------------------------------------------------ controls between rounds
    def ensure_between_rounds(self, what: str) -> None:
        """Raise :class:`RoundtableError` while a round runs or when the branch is read-only."""
        if self.running:
            raise RoundtableError(f"a round is running; {what} between rounds")
        if self.branch.is_read_only or (self.rt.store.get_branch(self.branch.id) or self.branch).is_read_only:
            raise RoundtableError(f"roundtable {self.branch.id} is {self.branch.status}; restore it first")

    def _save_setup(self, setup: RoundtableSetup) -> None:
        self.rt.store.add_memo(SETUP_MEMO_KIND, json.dumps(setup.to_json(), ensure_ascii=False),
                               branch_id=self.branch.id, conversation_id=self.conversation_id)
        self.setup = setup

    def add_seat(self, seat: Seat) -> None:
        """Add a seat (it speaks last) between rounds."""
        self.ensure_between_rounds("add seats")
        check_engine(self.rt, seat.engine)
        seats = (*self.setup.seats, seat)
        check_unique(seats)
        self._save_setup(self.setup.with_seats(seats))

    def remove_seat(self, name: str) -> None:
        """Remove a seat between rounds (its earlier answers stay)."""
        self.ensure_between_rounds("remove seats")
        gone = self.setup.seat(name)
        seats = tuple(seat for seat in self.setup.seats if seat is not gone)
        if not seats:
            raise RoundtableError("the last seat cannot be removed")
        self._save_setup(self.setup.with_seats(seats))

    def add_user_message(self, text: str) -> MessageRecord:
        """The user's word between rounds: every seat sees it next round, the round it is stored under."""
        self.ensure_between_rounds("write to the seats")
        text = text.strip()
        if not text:
            raise RoundtableError("the message is empty")
        message = self.rt.store.add_message(self.conversation_id, "user", text,
                                            meta={"kind": USER_KIND, "round": self.last_round() + 1})
        self.rt.emit(MessageAdded(self.conversation_id, message.id, "user"))
        return message

    # ------------------------------------------------------------------ running
    def stop(self, reason: str = STOPPED_BY_USER) -> int:
        """Stop the discussion: running seats are cancelled and no seat still to speak starts; how many stopped.

        ``reason`` is what the stopped seats' answers say (the user, or a signal to the headless command).
        """
        self._stopping = True
        self._stop_reason = reason
        tasks = [task for task in self._tasks.values() if not task.done()]
        for task in tasks:
            task.cancel(reason)
        return len(tasks)

    def cancel_seat(self, name: str) -> bool:
        """Cancel one running seat (the others go on); False when it is not running."""
        seat = self.setup.seat(name)
        task = self._tasks.get(seat.name)
        if task is None or task.done():
            return False
        task.cancel(CANCELLED_BY_USER)
        return True

    def seat_running(self, name: str) -> bool:
        """Whether the seat called ``name`` is answering now."""
        task = self._tasks.get(name)
        return task is not None and not task.done()

    async def run(self, rounds: int) -> list[RoundResult]:
        """Run ``rounds`` rounds of the seats, one after the other (fewer if stopped)."""
        results = []
        for i in range(rounds):
            if self._stopping:
                break
            results.append(await self.run_round(prefetch=i < rounds - 1))
        return results

    async def run_round(self, *, prefetch: bool = True) -> RoundResult:
        """Run the next round of every seat and store the brief; a failed seat does not stop the round.

        ``prefetch``: embed each answer as it is stored, for the next round (off when none follows).
        """
        self.ensure_between_rounds("start a round")
        self._stopping = False
        self._stop_reason = STOPPED_BY_USER
        self._prefetch = prefetch
        number = self.last_round() + 1
        self._running_round = number
        try:
            result = await self._run_round(number)
        except asyncio.CancelledError:  # the whole run was stopped (a signal, the app closing): no orphan seat
            running = [task for task in self._tasks.values() if not task.done()]
            for task in running:
                task.cancel(self._stop_reason)
            await asyncio.gather(*running, return_exceptions=True)
            raise
        finally:
            self._running_round = None
            self._tasks.clear()
        self.write_brief()
        self.emit(RoundFinished(result))
        return result

    async def _run_round(self, number: int) -> RoundResult:
        seats = self.setup.seats
        self.emit(RoundStarted(number, self.setup.mode, tuple(s.name for s in seats)))
        parts = await self._round_parts(number)
        earlier = {a.seat: a.message.content for a in self._latest_answers(before=number)}
        if self.setup.mode == "deliberative":
            for seat in seats:
                prepared = self._prepare(seat, parts)
                self._tasks[seat.name] = asyncio.create_task(self._seat_turn(prepared, number, dict(earlier)))
            await asyncio.wait(list(self._tasks.values()))
            answers = [self._outcome(task, seat, number) for seat, task in zip(seats, self._tasks.values(),
                                                                                strict=True)]
        else:
            answers = []
            for seat in seats:
                if self._stopping:
                    break
                spoken = tuple(_spoken(a) for a in answers if a.ok)
                prepared = self._prepare(seat, _with_round(parts, spoken))
                seen = {**earlier, **{a.seat: a.message.content for a in answers if a.ok}}
                task = asyncio.create_task(self._seat_turn(prepared, number, seen))
                self._tasks[seat.name] = task
                await asyncio.wait([task])
                answers.append(self._outcome(task, seat, number))
        compressed = parts.earlier is not None and parts.earlier.compressed
        return RoundResult(number, tuple(answers), compressed, stopped=self._stopping)

    async def _round_parts(self, number: int) -> PromptParts:
        """What this round's seats may be told (each seat's blindness then picks from it)."""
        previous = max((r for r in self.seat_rounds() if r < number), default=0)
        turns = self.user_turns()
        # the user's word is stored under the round it precedes (older stores: a round of its own between them)
        moderator = "\n\n".join(text for r, text in turns if previous < r <= number)
        earlier_turns = [(r, text) for r, text in turns if r <= previous]
        stored = [StoredAnswer(a.message.id, a.message.content, _spoken(a))
                  for a in self.answers() if a.round < number and a.ok]
        earlier = None
        if stored:
            await self.settle_embedding()
            latest_user = moderator or (turns[-1][1] if turns else "")
            earlier = await self.recall.recall(stored, earlier_turns, self.setup.topic, latest_user)
            if not earlier.compressed and not self._told_full_transcript:
                self._told_full_transcript = True
                why = self.recall.unavailable_reason or "no embedding model"
                self.emit(RoundtableNotice(f"Earlier rounds are sent in full: {why}.", "warning"))
        context = await asyncio.to_thread(runtime_minimal_context, self.rt)
        return PromptParts(topic=self.setup.topic, round=number, participants=tuple(s.name for s in self.setup.seats),
                           project_context=context, earlier=earlier, moderator=moderator)

    def _latest_answers(self, *, before: int) -> list[SeatAnswer]:
        latest: dict[str, SeatAnswer] = {}
        for answer in self.answers():
            if answer.round < before and answer.ok:
                latest[answer.seat] = answer
        return list(latest.values())

    def _prepare(self, seat: Seat, parts: PromptParts) -> _Prepared:
        prompt = build_seat_prompt(seat, parts)
        compressed = not seat.blind and parts.earlier is not None and parts.earlier.compressed
        return _Prepared(seat, prompt, default_counter().count(prompt), compressed)

    def engine_for_seat(self, seat: Seat) -> tuple[Engine, str]:
        engine, config = self.rt.turns.engine_named(seat.engine)
        if not seat.model or seat.model == config.model:
            return engine, config.model
        key = (seat.engine, seat.model)
        if key not in self._engines:
            from tunaflow_tui.agents.registry import create_engine

            self._engines[key] = create_engine(config.model_copy(update={"model": seat.model}))
        return self._engines[key], seat.model

    async def _seat_turn(self, prepared: _Prepared, number: int, seen: dict[str, str]) -> SeatAnswer:
        """One seat's turn, stored; any failure (or a cancel) is recorded on the seat, never raised."""
        seat = prepared.seat
        meta: dict[str, object] = {
            "kind": ANSWER_KIND, "seat": seat.name, "round": number, "role": seat.role, "role_label": seat.role_label,
            "blind": seat.blind, "output_limit": seat.limit, "prompt": prepared.prompt,
            "context_tokens": prepared.tokens, "compressed": prepared.compressed, "mode": self.setup.mode,
        }
        self.emit(SeatStarted(number, seat.name, seat.engine, prepared.tokens, prepared.compressed))
        message: MessageRecord | None = None
        try:
            engine, model = self.engine_for_seat(seat)
            request = TurnRequest(prompt=prepared.prompt, cwd=self.rt.project_dir, system=system_text(seat),
                                  role=seat.persona, profile=PermissionProfile.READ_ONLY)
            result = await self.rt.runner.run(engine=engine, model=model, conversation_id=self.conversation_id,
                                              role=seat.persona, request=request, meta=meta)
            message = result.message
        except asyncio.CancelledError as exc:
            task = asyncio.current_task()
            if task is not None:
                task.uncancel()
            message = self._stored_turn(seat.name, number) or self._failure(
                seat, meta, ErrorKind.CANCELLED, str(exc.args[0]) if exc.args else CANCELLED_BY_USER)
        except (AgentStillRunning, TurnInProgress, KeyError, ValueError, OSError) as exc:
            message = self._failure(seat, meta, ErrorKind.CRASHED, str(exc) or type(exc).__name__)
        if message.status == "done" and message.content.strip() and not seat.blind:
            meta["responds_to"] = list(responds_to(message.content, seat.name, seen))
            message = self.rt.store.set_message_meta(message.id, meta)
        answer = SeatAnswer(message)
        if answer.ok:
            self._embed_soon(answer)
        self.emit(SeatFinished(number, answer))
        return answer

    def _embed_soon(self, answer: SeatAnswer) -> None:
        """Store the answer's vectors in the background, so the next round does not wait for them."""
        if self.recall.unavailable_reason is not None or not self._prefetch:
            return
        stored = [StoredAnswer(answer.message.id, answer.message.content, _spoken(answer))]
        task = asyncio.create_task(asyncio.to_thread(self.recall.store_vectors, stored))
        self._embedding.add(task)
        task.add_done_callback(self._embedding.discard)

    async def settle_embedding(self) -> None:
        """Wait for the answers' vectors still being stored (a round starts after them)."""
        if self._embedding:
            await asyncio.gather(*list(self._embedding), return_exceptions=True)

    def _outcome(self, task: asyncio.Task[SeatAnswer], seat: Seat, number: int) -> SeatAnswer:
        """The answer a finished seat task gave; a task cancelled before it began is recorded as cancelled."""
        if not task.cancelled() and task.exception() is None:
            return task.result()
        meta: dict[str, object] = {"kind": ANSWER_KIND, "seat": seat.name, "round": number, "role": seat.role,
                                   "role_label": seat.role_label, "blind": seat.blind, "mode": self.setup.mode}
        why = self._stop_reason if self._stopping else CANCELLED_BY_USER
        if not task.cancelled():
            why = f"the seat's turn failed: {task.exception()}"
        answer = SeatAnswer(self._failure(seat, meta, ErrorKind.CANCELLED if task.cancelled() else ErrorKind.CRASHED,
                                          why))
        self.emit(SeatFinished(number, answer))
        return answer

    def _stored_turn(self, seat: str, number: int) -> MessageRecord | None:
        for message in reversed(self.messages()):
            if message.meta.get("seat") == seat and message.meta.get("round") == number \
                    and message.meta.get("kind") == ANSWER_KIND and message.status != "streaming":
                return message
        return None

    def _failure(self, seat: Seat, meta: dict[str, object], kind: ErrorKind, why: str) -> MessageRecord:
        message = self.rt.store.add_message(self.conversation_id, "assistant", "", persona=seat.persona,
                                            engine=seat.engine, status="interrupted" if kind == ErrorKind.CANCELLED
                                            else "error", meta=meta)
        return self.rt.store.update_message(message.id, error_kind=str(kind), error_message=why)

    async def rerun_seat(self, name: str, round_number: int | None = None) -> SeatAnswer:
        """Run one seat again with exactly what it was sent; its new answer replaces only its old one."""
        seat = self.setup.seat(name)
        if self.seat_running(seat.name):
            raise RoundtableError(f"{seat.name} is answering now; cancel it first")
        previous = [a for a in self.answers() if a.seat == seat.name
                    and (round_number is None or a.round == round_number)]
        if not previous:
            raise RoundtableError(f"{seat.name} has no answer to re-run")
        old = previous[-1]
        prepared = _Prepared(seat, old.prompt or build_seat_prompt(seat, await self._round_parts(old.round)),
                             old.context_tokens, old.compressed)
        seen = {a.seat: a.message.content for a in self.answers()
                if a.ok and a.seat != seat.name and (a.round < old.round or (
                    self.setup.mode == "sequential" and a.round == old.round
                    and a.message.id < old.message.id))}
        task = asyncio.create_task(self._seat_turn(prepared, old.round, seen))
        self._tasks[seat.name] = task
        try:
            await asyncio.wait([task])
            answer = self._outcome(task, seat, old.round)
        finally:
            self._tasks.pop(seat.name, None)
        self.rt.store.delete_message(old.message.id)
        self.write_brief()
        return answer

    def token_totals(self) -> dict[str, Any]:
        """Tokens in and out, context tokens sent and cost (where reported): per seat, and in all."""
        per_seat: dict[str, dict[str, Any]] = {}
        total: dict[str, Any] = {"input": 0, "output": 0, "context": 0, "cost_usd": None}
        for answer in self.answers():
            usage = answer.message.usage
            seat = per_seat.setdefault(answer.seat, {"input": 0, "output": 0, "context": 0, "cost_usd": None})
            for bucket in (seat, total):
                bucket["input"] += usage.input_tokens
                bucket["output"] += usage.output_tokens
                bucket["context"] += answer.context_tokens
                if usage.cost_usd is not None:
                    bucket["cost_usd"] = (bucket["cost_usd"] or 0.0) + usage.cost_usd
        return {"per_seat": per_seat, "total": total}

    # ------------------------------------------------------------------ the brief
    def consensus(self) -> Consensus | None:
        """The latest consensus block a synthesizer seat gave."""
        for answer in reversed(self.answers()):
            if answer.ok and answer.meta.get("role") == SYNTHESIZER:
                blocks = [m for m in parse_markers(answer.message.content, SYNTHESIZER).accepted
                          if isinstance(m, Consensus)]
                if blocks:
                    return blocks[-1]
        return None

    def brief(self) -> str:
        """Key Positions (each seat's last answer, first two sentences) and the synthesizer's consensus."""
        order = [seat.name for seat in self.setup.seats]
        latest: dict[str, SeatAnswer] = {}
        for answer in self.answers():
            if answer.ok:
                latest[answer.seat] = answer
        names = order + [name for name in latest if name not in order]
        positions = [Position(name, latest[name].role, _shown(latest[name].message)) for name in names
                     if name in latest]
        return build_brief(self.setup.topic, positions, self.consensus())

    async def rank(self, rng: random.Random | None = None) -> RankingResult:
        """The anonymous peer-ranking round (see :mod:`.roundtable_ranking`)."""
        return await rank(self, rng)

    def write_brief(self) -> str | None:
        """Store the brief as the branch's latest ``roundtable_brief`` memo (when any seat has answered)."""
        if not any(answer.ok for answer in self.answers()):
            return None
        text = self.brief()
        self.rt.store.add_memo(BRIEF_MEMO_KIND, text, branch_id=self.branch.id, conversation_id=self.conversation_id)
        return text


def _shown(message: MessageRecord) -> str:
    return message.display_text or message.content


def _spoken(answer: SeatAnswer) -> SpokenAnswer:
    return SpokenAnswer(answer.seat, answer.role, answer.round, plain_text_keep_lines(answer.message.content))


def _with_round(parts: PromptParts, spoken: Sequence[SpokenAnswer]) -> PromptParts:
    from dataclasses import replace

    return replace(parts, this_round=tuple(spoken))


def check_engine(rt: WorkflowRuntime, name: str) -> None:
    """Raise :class:`SeatSpecError` unless ``name`` is a configured engine."""
    if name not in rt.settings.engines:
        known = ", ".join(sorted(rt.settings.engines)) or "none"
        raise SeatSpecError(f"unknown engine {neutralize(name)!r} (configured: {known})")


__all__ = ["Roundtable", "RoundtableError", "check_engine", "plain_text", "system_text"]
