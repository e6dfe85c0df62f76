"""The engine service: the table's sensors and console in, public state out.

Theory of operation
-------------------
``EngineCore`` is pure: it turns a wire message into a ``Floor`` input,
recognises a message it has already seen (``SourceTracker``), says what to
publish, and can be rebuilt by replaying stored inputs.  ``EngineService`` is
the edge around it: the MQTT client (``engine.bus.BusClient``), the event
store, and the order that makes the table durable:

    message in -> tracked (duplicate? dropped) -> appended to the store (fsync)
               -> applied to the Floor -> public/state, dealer/prompt, history/hand out

Every input is stored before any of its effects is published, so after a
crash (even SIGKILL) the engine replays the store and carries on with the
hand exactly where it was.  A camera observation is appended without an fsync
of its own (the next one covers it: a shoe card's, or the engine's own within
``SYNC_AFTER_S``); its PUBACK waits for that, ``publish`` syncs before it shows
anything, and a state goes out for it only when the table's state changed, so
the shoe card after a run of observations does not wait behind an fsync and a
publish for each.  A message the broker delivers again is found in
the store by its (source, session, seq) and ignored.  A refused input is
stored too: replaying it refuses it again, so the replay stays exact.
"""

from __future__ import annotations

import json
import logging
import queue
import re
import threading
import time
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from engine import handlog
from engine.broker.acl import device_role
from engine.bus import Verdict
from engine.engineconfig import EngineConfig, ServiceConfigError
from engine.enginecore import (
    ENGINE_SOURCE,
    MAX_WIRE_PROMPTS,
    NOTE,
    TRACKED_CHANNELS,
    EngineCore,
    hand_id,
    hand_record,
    input_from_message,
    legacy_key,
    seats_changed,
    source_allowed,
    source_key,
    source_of,
    stored_at,
    utc_now,
)
from engine.floor import FloorOutputs, Prompt
from engine.hand import Hand
from engine.irregularities import BY_ID
from engine.wire import Channel, Message, Role

# What other modules take from here (the engine's edge, its core and its settings, in one place).
__all__ = ["EngineConfig", "EngineCore", "EngineService", "ServiceConfigError", "seats_changed", "source_key",
           "source_of"]

log = logging.getLogger(__name__)

#: How long the engine waits before trying a failed store write again (held inputs, owed work).
STORE_RETRY_S = 0.5
IDLE_AFTER_S = 0.5  # the table counts as quiet this long after an input (store upkeep then)
IDLE_CHECK_S = 0.25
#: Forged device names the engine remembers (each reported once); a flood past it is only logged.
MAX_FORGED_NAMES = 1024
#: History queries waiting for an answer; one more is told to ask again (the table comes first).
MAX_HISTORY_QUEUED = 4
#: History queries a console may send at once, and a second after (a dealer taps a few a minute).
HISTORY_BURST = 20
HISTORY_PER_S = 5.0

#: Camera observations are stored without an fsync of their own (``durable=False``): the next
#: fsync covers them.  At most this many wait for one, with their PUBACKs (the broker sends the
#: engine at most 20 unacknowledged messages, shoe cards included: never let them fill that) ...
MAX_UNSYNCED = 4
#: ... and at most this long (the housekeeping thread syncs them).
SYNC_AFTER_S = 0.1
#: A camera observation whose public state is the one already sent publishes it again only this
#: long after the last publish (the console shows the camera's age since heard).
HEARD_REFRESH_S = 1.0
#: Inputs whose timings ``EngineService.trace`` keeps (the latest; a table runs for hours).
TRACE_LEN = 4096


@dataclass(slots=True)
class InputTrace:
    """Where one message's time went in the engine (``time.monotonic`` seconds): what the table
    bench reads to say whether a shoe card waited behind other inputs, the store or the publish."""

    channel: str
    kind: str
    source: str
    seq: int | None
    arrived: float  # the bus handed it to the engine (before the engine's lock)
    started: float = 0.0  # the engine began to handle it
    stored: float = 0.0  # its append returned (durable); 0: not stored
    published: float = 0.0  # the state after it was handed to the socket; 0: none
    done: float = 0.0  # the engine was done with it (its own work after it included)


# ----------------------------------------------------------------------------- the edge


class EngineService:
    """MQTT in, store, Floor, MQTT out.  ``start()`` returns once connected; ``stop()`` ends it.

    Durability: a message is acknowledged to the broker (manual PUBACK) only once its input is
    in the store.  If the store cannot write (a full disk), the message stays unacknowledged and
    is held, with every later one, in arrival order; the dealer sees the ``source.store`` prompt;
    the housekeeping thread tries again every ``STORE_RETRY_S`` and takes the held inputs in
    order once the store writes again (a crash meanwhile loses nothing: the broker delivers the
    unacknowledged messages again to the engine's persistent session).  What the engine does by
    itself after an input (a gap prompt, keeping a finished hand, starting the next hand) is
    *owed* until it is stored, and is settled before any later input."""

    def __init__(self, config: EngineConfig) -> None:
        from engine.store import open_store

        self.config = config
        self.core = EngineCore(config)
        self.store = open_store(config.store, config.table)
        self._lock = threading.RLock()
        self._bus: Any = None
        self._prompts_sent: list[dict[str, Any]] | None = None
        self._last_input = time.monotonic()
        self._stopping = threading.Event()
        self._housekeeper: threading.Thread | None = None
        self.session = 1
        self.replayed = 0
        self.started_at = time.monotonic()
        #: messages not yet durable (the store failed), oldest first, with their PUBACK
        self._held: list[tuple[Message, Any]] = []
        #: own inputs not yet stored, and finished hands not yet in the hand log
        self._owed: list[dict[str, Any]] = []
        self._unrecorded: list[Hand] = []
        #: why the store cannot write (None: it can); shown as the ``source.store`` prompt
        self.store_problem: str | None = None
        self._store_prompt: Prompt | None = None
        self._forged_reported: set[str] = set()
        self._applied = 0  # the offset of the last stored input applied to the Floor
        #: (shoe device, boot) -> the shoe's event counters of the draws taken (a bridge that
        #: restarts may publish a draw again, under a new session: it is not dealt twice)
        self._draws: dict[tuple[str, int], set[int]] = {}
        self._last_boot: dict[str, int] = {}  # shoe device -> the boot count of its last card
        self._reset_seen: dict[str, bool] = {}  # a reset notice came after that card
        #: (key, session) -> the highest seq stored of it (an older session's message already taken)
        self._session_heads: dict[tuple[str, int], int] = {}
        self._losses_told: set[tuple[str, int, int]] = set()  # told, but the message not yet stored
        self._pending_history: list[dict[str, Any]] = []
        #: history queries to answer, each with what it needs copied (``_answer_history``); None: stop
        self._history_jobs: queue.Queue[tuple[dict[str, Any], Role, list[handlog.HandEntry],
                                               list[dict[str, Any]] | None] | None] = queue.Queue()
        self._history_thread: threading.Thread | None = None
        self._history_budget: dict[str, tuple[float, float]] = {}  # console -> (tokens, when)
        self._history_busy_told: dict[str, float] = {}  # console -> when it was last told to wait
        self._hand_over_at: float | None = None  # when the result began to hold (auto_start with hold_s)
        #: the latest inputs' timings (low cost: a few clock reads an input; see ``InputTrace``)
        self.trace: deque[InputTrace] = deque(maxlen=TRACE_LEN)
        self._tracing: InputTrace | None = None
        #: camera observations stored so far without an fsync (a count), and how many of them are
        #: known durable; the PUBACKs of messages taken meanwhile wait: (count, ack, when taken)
        self._lazy_count = 0
        self._synced_count = 0
        self._acks_waiting: list[tuple[int, Any, float]] = []
        self._state_sent: dict[str, Any] | None = None  # the last public state sent, less the ages
        self._state_sent_at = 0.0

    # -- replay ---------------------------------------------------------------------
    def replay(self) -> int:
        """Rebuild the table from the store; returns how many inputs were replayed.

        A hand that finished in the log but is not in the hand log (the engine stopped between
        the two) is kept now, and the next hand starts if it would have."""
        count = 0
        config_game: Any = None  # the config's game as last stored
        first_seats: list[tuple[Any, Any, Any]] | None = None  # the seats the config gave the first start
        seats_reported = ""  # the last config-seats report stored
        heads = self.store.heads()
        for ev in self.store.events():
            self._applied = ev.offset
            if ev.source == ENGINE_SOURCE and ev.payload.get("kind") == "table" and ev.payload.get("op") == "game":
                config_game = ev.payload.get("game")
            if ev.source == ENGINE_SOURCE and ev.session == 1 and ev.payload.get("kind") == "table" \
                    and ev.payload.get("op") == "seat":
                first_seats = (first_seats or []) + [
                    (ev.payload.get("seat"), ev.payload.get("name"), ev.payload.get("amount"))]
            if ev.source == ENGINE_SOURCE and ev.payload.get("kind") == "source" and ev.payload.get("status") == "config":
                seats_reported = str(ev.payload.get("problem", ""))
            if ev.source != ENGINE_SOURCE:
                mark = (legacy_key(ev.source), ev.session)
                self._session_heads[mark] = max(self._session_heads.get(mark, 0), ev.seq)
            if ev.kind == NOTE and ev.payload.get("message") == "reset":
                self._reset_seen[source_of(ev.source)] = True
            if ev.kind in ("engine_start", NOTE):
                continue
            self.core.apply(source_of(ev.source), ev.payload, ev.session, ev.seq, stored_at(ev.recorded_at))
            self._note_draw(source_of(ev.source), ev.payload)
            count += 1
        for source, (session, seq) in heads.items():
            if source != ENGINE_SOURCE:
                self.core.tracker.observe(legacy_key(source), session, seq)
        engine_head = heads.get(ENGINE_SOURCE)
        self.session = (engine_head[0] + 1) if engine_head else 1
        self._engine_seq = 0
        self.store.append(ENGINE_SOURCE, self.session, self._next_seq(), "engine_start", {"kind": "engine_start"})
        if count == 0:
            for inp in self.core.setup_inputs():
                self._accept_own(inp)
        elif config_game != self.config.game.to_json():
            # The config's game changed since it was last stored (or a store older than game changes
            # has none): a game change from the next hand, in the log; the hands played keep theirs.
            log.warning("the config's game is not the one stored: %s %s/%s from the next hand",
                        self.config.game.variant.long_name, self.config.game.small_bet, self.config.game.big_bet)
            self._accept_own(self.core.game_input())
        if count and not self.config.shoe and self.core.floor.shoe_active:
            # The config now says the table has no shoe (it had one): the camera's cards are the deal.
            log.warning("the config says this table has no shoe: the camera's cards are the deal from now on")
            self._accept_own({"kind": "source", "device": "shoe", "status": "absent"})
        if count and first_seats is not None:
            change = seats_changed(first_seats, self.config.seats)
            if change and change != seats_reported:
                # RRoP 3.1: seats are taken at the table.  The file's new seats are not applied (the
                # table's seats and stacks are its log's); the dealer is told, once per change.
                log.warning("the config's seats changed since the table's first start (%s): not applied", change)
                self._accept_own({"kind": "source", "device": self.config.device, "status": "config",
                                  "problem": change})
        kept = {h.hand_id for h in self.store.list_hands()}
        self._unrecorded = [h for h in self.core.finished if hand_id(h, self.config.table) not in kept]
        for h in self.core.finished:
            if hand_id(h, self.config.table) in kept:
                self.core.provenance.forget(h.hand_id)
        self.core.finished.clear()
        if self._unrecorded:
            log.warning("replay: %d finished hand(s) were not in the hand log; keeping them now",
                        len(self._unrecorded))
        self._settle()
        self.replayed = count
        return count

    def _next_seq(self) -> int:
        self._engine_seq += 1
        return self._engine_seq

    def _accept_own(self, inp: dict[str, Any]) -> FloorOutputs | None:
        seq = self._next_seq()
        appended = self.store.append(ENGINE_SOURCE, self.session, seq, str(inp["kind"]), inp)
        self._synced(self._lazy_count)  # a durable commit: the WAL is synced with every row before it
        self._applied = max(self._applied, appended.offset)
        out = self.core.apply(ENGINE_SOURCE, inp, self.session, seq, utc_now())
        self._unrecorded += self.core.finished
        self.core.finished.clear()
        return out

    def _own(self, inp: dict[str, Any]) -> None:
        """An input the engine makes itself: owed until stored (now, unless the store fails)."""
        self._owed.append(inp)
        self._settle_or_note()

    # -- bus ------------------------------------------------------------------------
    def start(self, wait: float = 10.0) -> EngineService:
        from engine.bus import BusClient
        from engine.configfile import broker_login

        username, password = self.config.username, self.config.password
        if self.config.broker_config_dir:  # before the replay: a wrong folder changes nothing in the store
            username, password = broker_login("engine", broker_dir=self.config.broker_config_dir,
                                              key="broker.config_dir", device=self.config.device)
        self.replay()
        self._bus = BusClient(
            host=self.config.broker_host,
            port=self.config.broker_port,
            username=username,
            password=password,
            table=self.config.table,
            device=self.config.device,
            role="engine",
            session=self.session,
            persistent=True,
            on_message_ack=self._on_message,
            on_connection=self._on_connection,
            on_invalid=self._on_invalid,
        )
        for channel in (Channel.SHOE, Channel.VISION, Channel.COMMAND, Channel.AVAIL):
            self._bus.subscribe(channel)
        self._bus.start(wait=wait)  # _on_connection publishes the state and the prompts
        self._housekeeper = threading.Thread(target=self._housekeeping, name="engine-housekeeping", daemon=True)
        self._housekeeper.start()
        self._history_thread = threading.Thread(target=self._history_worker, name="engine-history", daemon=True)
        self._history_thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._housekeeper is not None:
            self._housekeeper.join(5)
        if self._acks_waiting:
            self._sync_aside()  # what is stored goes out acknowledged
        if self._history_thread is not None:
            self._history_jobs.put(None)
            self._history_thread.join(5)
        if self._bus is not None:
            self._bus.stop()
        self.store.close()

    def _housekeeping(self) -> None:
        """Store upkeep (checkpoints) when the table has been quiet for a moment, so that it
        does not hold up an input; under a steady stream of inputs ``_after`` does it now and then.
        While the store cannot write: try the held inputs again."""
        last_try = 0.0
        while not self._stopping.wait(min(IDLE_CHECK_S, STORE_RETRY_S, SYNC_AFTER_S)):
            if self._acks_waiting and time.monotonic() - self._acks_waiting[0][2] >= SYNC_AFTER_S:
                self._sync_aside()
            if self._hand_over_at is not None and time.monotonic() - self._hand_over_at >= self.config.hold_s:
                with self._lock:
                    self._drain()  # the hold is over: the next hand (auto_start)
            if self.store_problem is not None and time.monotonic() - last_try >= STORE_RETRY_S:
                last_try = time.monotonic()
                with self._lock:
                    self._drain()
                continue
            if time.monotonic() - self._last_input >= IDLE_AFTER_S:
                try:
                    self.store.maintain(idle=True)
                except Exception:
                    log.exception("store upkeep failed; the next one will try again")

    def _on_connection(self, up: bool) -> None:
        # At every connect: the first, and after a broker restart, when the retained state may be
        # gone (amqtt keeps nothing): say it (again).
        if up and self._bus is not None:
            with self._lock:
                self._flush_history()
                self.publish(again=True)

    def _on_message(self, msg: Message, ack: Any = None) -> None:
        trace = InputTrace(str(msg.channel), msg.kind, msg.source, msg.seq, time.monotonic())
        with self._lock:
            self._last_input = trace.started = time.monotonic()
            self._held.append((msg, ack))
            self._tracing = trace
            try:
                self._drain()
            finally:
                self._tracing = None
                trace.done = time.monotonic()
                self.trace.append(trace)

    # -- durability -----------------------------------------------------------------
    def _drain(self) -> None:
        """Settle what is owed, then take the held messages in order, acknowledging each once it is
        stored; stop at the first store failure (its message stays held and unacknowledged)."""
        from engine.store import StoreError

        try:
            self._settle()
            while self._held:
                msg, ack = self._held[0]
                self._handle(msg)
                self._held.pop(0)
                if ack is not None:
                    if self._synced_count < self._lazy_count:
                        # Not durable yet (or taken after one that is not: PUBACKs go in order).
                        self._acks_waiting.append((self._lazy_count, ack, time.monotonic()))
                    else:
                        ack()
                if len(self._acks_waiting) >= MAX_UNSYNCED:
                    self._sync_now()
                self._settle()
        except StoreError as exc:
            self._store_failed(str(exc))
            return
        if self.store_problem is not None:
            log.warning("the event store writes again; %s", "the held inputs were taken in order")
            self.store_problem = None
            self._store_prompt = None
            self.publish()

    # -- camera observations stored without an fsync of their own -------------------------
    def _synced(self, count: int) -> None:
        """The first ``count`` observations stored lazily are durable: their PUBACKs go (in order)."""
        self._synced_count = max(self._synced_count, count)
        while self._acks_waiting and self._acks_waiting[0][0] <= self._synced_count:
            self._acks_waiting.pop(0)[1]()

    def _sync_now(self) -> None:
        """Make what is stored durable before anything that may show it goes out (under the lock)."""
        if self._synced_count < self._lazy_count:
            count = self._lazy_count
            self.store.sync()
            self._synced(count)

    def _sync_aside(self) -> None:
        """The housekeeping thread's sync: the fsync outside the lock, so an input need not wait for it."""
        from engine.store import StoreError

        with self._lock:
            count = self._lazy_count
        try:
            self.store.sync()
        except StoreError as exc:
            log.warning("%s; the next sync will try again", exc)
            return
        with self._lock:
            self._synced(count)

    def _store_failed(self, problem: str) -> None:
        first = self.store_problem is None
        self.store_problem = problem.removeprefix("the event store cannot write: ")
        if first:
            log.error("%s; %d input(s) held, not acknowledged", problem, len(self._held))
            rule = BY_ID["source.store"]
            text = rule.ruling.format(problem=self.store_problem)
            self._store_prompt = Prompt("store", rule, (), text, {"problem": self.store_problem})
            self.publish()

    def _settle_or_note(self) -> None:
        from engine.store import StoreError

        try:
            self._settle()
        except StoreError as exc:
            self._store_failed(str(exc))

    def _settle(self) -> None:
        """Store what the engine owes: its own inputs, finished hands for the hand log, the next hand."""
        while self._owed:
            self._accept_own(self._owed[0])
            self._owed.pop(0)
            self.publish()
        while self._unrecorded:
            self._record(self._unrecorded[0])
            self._unrecorded.pop(0)
        nxt = self.core.next_hand_input()
        if nxt is not None and self.config.hold_s > 0:
            # The result holds hold_s seconds on both screens; the housekeeping thread starts it then.
            over = self._hand_over_at = self._hand_over_at or time.monotonic()
            if time.monotonic() - over < self.config.hold_s:
                return
        self._hand_over_at = None
        if nxt is not None:
            self._accept_own(nxt)
            self.publish()
            self._settle()  # a hand can finish at once (everyone all in); never more than a few

    def _handle(self, msg: Message) -> None:
        if msg.channel is Channel.AVAIL:
            online = msg.kind == "online"
            if msg.source == self.config.device:
                return
            was = self.core.devices.get(msg.source)
            self.core.devices[msg.source] = online
            if was is not None and was != online and msg.source.startswith(("shoe", "bridge", "cam", "vision")):
                self._owed.append({"kind": "source", "device": msg.source, "status": "online" if online else "offline"})
            self.publish()
            return
        if msg.session is None or msg.seq is None or msg.channel not in TRACKED_CHANNELS:
            return
        if not source_allowed(msg.channel, msg.source):
            # The channel's ACL fixes the role that published; the payload's source must be one of
            # that role's devices, or the message is refused and the dealer told (once per name).
            key = source_key(msg.channel, msg.source)
            log.warning("refused a message on %s claiming to be from %r", msg.channel, msg.source)
            if key not in self._forged_reported and len(self._forged_reported) < MAX_FORGED_NAMES:
                # Each name once (stored: the floor folds it into the channel's open prompt, so a
                # restart replays the count); past MAX_FORGED_NAMES a flood is only logged.
                self._forged_reported.add(key)
                self._owed.append({"kind": "source", "device": msg.source, "status": "forged",
                                   "channel": str(msg.channel)})
            return
        if msg.source != self.config.device:
            # After the sender check: only a device that may send on this channel is heard (a
            # console naming itself shoe-1 must not refresh the shoe's health).
            self.core.heard[msg.source] = time.monotonic()  # the console shows the age since this
        key = source_key(msg.channel, msg.source)
        before = self.core.tracker.snapshot(key)
        tracked = self.core.tracker.observe(key, msg.session, msg.seq)
        restarted = False
        if tracked.verdict is Verdict.STALE:
            # An older session than the last one heard: never dropped silently (a console that
            # claimed a huge session must not silence the real one; a bridge that lost its
            # session file starts again at 1).  A message of a session already taken is a
            # redelivery; any other starts that session again, with a source.restart prompt
            # (the shoe's (boot, counter) keeps a draw from being dealt twice).
            head = self._session_heads.get((key, msg.session))
            if head is not None and msg.seq <= head:
                return
            log.warning("%s sent session %d, older than the last one heard: taken as a restart, prompted",
                        key, msg.session)
            self.core.tracker.restore(key, None if head is None else (msg.session, head, [], 0))
            tracked = self.core.tracker.observe(key, msg.session, msg.seq)
            restarted = True
        if not tracked.verdict.accept:
            return
        if msg.channel is Channel.COMMAND and msg.kind == "history" and not self._history_allowed(msg.source):
            # A flood of queries from one console (review F13: 1000 of them, each stored with an
            # fsync, held the next shoe card for 5 s): past the budget a query is not stored, and is
            # answered "ask again" at most once a second.  It changes nothing at the table; after a
            # restart its seq shows as a gap.
            now = time.monotonic()
            if now - self._history_busy_told.get(msg.source, 0.0) >= 1.0:
                self._history_busy_told[msg.source] = now
                self._send_answer({"request": msg.body.get("request"), "hands": [], "hand": None,
                                   "error": "too many history queries from this console: ask again in a moment"})
            return
        from engine.store import StoreError

        inp = self.core.authorized(input_from_message(msg))  # a floor PIN is never stored
        if inp is not None and self._drawn_before(msg.source, inp):
            log.warning("%s published draw %s (boot %s) again; not dealt twice", msg.source, inp.get("counter"),
                        inp.get("boot"))
            inp = None  # stored as a note: the sequence keeps no hole
        try:
            # What this message says about messages that never came is told first, so that a
            # blocking prompt holds the card that revealed the loss (it must not take a lost
            # card's slot).  Stored before the message; not told twice if its append fails.
            mark = (key, msg.session, msg.seq)
            if mark not in self._losses_told:
                for own in self._losses(msg, tracked, inp, restarted):
                    self._accept_own(own)
                    self.publish()
                self._losses_told.add(mark)
            # A camera observation is stored without an fsync of its own: the next durable append,
            # or a sync before anything that may show it (``publish``), makes it durable; its
            # PUBACK waits for that (``_drain``).  So a run of observations costs one fsync, and
            # the shoe card after them does not wait behind an fsync each.
            lazy = msg.channel is Channel.VISION
            if inp is None:
                # Nothing for the table (shoe loaded, a reset notice): stored all the same, so the
                # sequence has no hole after a restart.
                appended = self.store.append(key, msg.session, msg.seq, NOTE, {"kind": NOTE, "message": msg.kind},
                                             durable=not lazy)
            else:
                appended = self.store.append(key, msg.session, msg.seq, str(inp["kind"]), inp, durable=not lazy)
            if lazy:
                self._lazy_count += 1
            else:
                self._synced(self._lazy_count)
            if self._tracing is not None:
                self._tracing.stored = time.monotonic()
        except StoreError:
            self.core.tracker.restore(key, before)  # delivered again later: it must not look seen
            raise
        if self._session_heads.get((key, msg.session), 0) < msg.seq:
            self._session_heads[(key, msg.session)] = msg.seq
        if appended.duplicate and appended.offset <= self._applied:
            return
        self._applied = max(self._applied, appended.offset)
        self._losses_told.discard(mark)
        if msg.channel is Channel.COMMAND and msg.kind == "history":
            self._answer_history(msg)  # stored as a note (the sequence keeps no hole); changes nothing
            return
        if inp is None:
            return
        out = self.core.apply(msg.source, inp, msg.session, msg.seq, utc_now())
        self._note_draw(msg.source, inp)
        self._after(out, quiet=lazy)

    def _losses(self, msg: Message, tracked: Any, inp: Mapping[str, Any] | None,
                restarted: bool = False) -> list[dict[str, Any]]:
        """Gaps always prompt (issue 19 item 11): messages that never came (a sequence gap, a new
        session not starting at 1: on the shoe's channel ``source.lost``, whose prompt holds the
        shoe's next cards until the dealer has counted; elsewhere ``source.gap``), a shoe that
        restarted (its reset notice, or a new boot count seen on its cards: ``source.restart``),
        events the shoe itself lost (``source.lost`` with their count)."""
        own: list[dict[str, Any]] = []
        if restarted:  # an older session than the last one heard (see _handle)
            own.append({"kind": "source", "device": msg.source, "status": "restart"})
            if inp is not None and inp.get("kind") == "shoe_card" and inp.get("boot") is not None:
                self._reset_seen[msg.source] = True  # that restart is told: not again for its boot
        if tracked.verdict in (Verdict.GAP, Verdict.NEW_SESSION) and tracked.missing:
            missing = tracked.missing[1] - tracked.missing[0] + 1
            if msg.channel is Channel.SHOE:
                own.append({"kind": "source", "device": msg.source, "status": "lost", "missing": missing})
            else:  # the floor folds it into the channel's open source.gap prompt, if any
                own.append({"kind": "source", "device": msg.source, "status": "gap", "missing": missing,
                            "channel": str(msg.channel)})
        if msg.channel is Channel.SHOE:
            if msg.kind == "reset":
                self._reset_seen[msg.source] = True
                own.append({"kind": "source", "device": msg.source, "status": "restart"})
            elif msg.kind == "device_error" and msg.body.get("code") == "events_missing":
                found = re.search(r"lost (\d+) event", str(msg.body.get("text", "")))
                own.append({"kind": "source", "device": msg.source, "status": "lost",
                            "missing": int(found.group(1)) if found else 1})
            elif inp is not None and inp.get("kind") == "shoe_card" and inp.get("boot") is not None:
                last = self._last_boot.get(msg.source)
                if last is not None and last != int(inp["boot"]) and not self._reset_seen.get(msg.source):
                    own.append({"kind": "source", "device": msg.source, "status": "restart"})
                self._reset_seen[msg.source] = False
        return own

    def _drawn_before(self, source: str, inp: Mapping[str, Any]) -> bool:
        if inp.get("kind") != "shoe_card" or inp.get("boot") is None or inp.get("counter") is None:
            return False
        return int(inp["counter"]) in self._draws.get((source, int(inp["boot"])), set())

    def _note_draw(self, source: str, inp: Mapping[str, Any]) -> None:
        if inp.get("kind") == "shoe_card" and inp.get("boot") is not None:
            self._last_boot[source] = int(inp["boot"])
            self._reset_seen[source] = False
            if inp.get("counter") is not None:
                self._draws.setdefault((source, int(inp["boot"])), set()).add(int(inp["counter"]))

    def _after(self, out: FloorOutputs | None, *, quiet: bool = False) -> None:
        # The input's own effect first: the state that follows from it (for the input that ends
        # a hand: the awards).  What the engine does by itself after it (keep a finished hand in
        # the hand log and send it to the recorder, start the next hand) is owed and settled next
        # (``_settle``), so none of that holds up the state of the input.  ``quiet`` (a camera
        # observation): only if the public state changed, or to refresh the camera's age.
        self.publish(unless_same=quiet)
        self._unrecorded += self.core.finished
        self.core.finished.clear()
        try:
            self.store.maintain()  # a checkpoint if many commits gathered; see _housekeeping
        except Exception:
            log.exception("store upkeep failed; the next one will try again")

    def _record(self, hand: Hand) -> None:
        from engine.store import HandRecord

        rec = hand_record(hand, self.config.table, self.core.provenance.of(hand))
        now = time.strftime("%Y-%m-%dT%H:%M:%S")
        self.store.record_hand(
            HandRecord(rec["hand"], self.config.table, rec["variant"], now, now, rec["events"], rec["phh"])
        )
        self.core.provenance.forget(hand.hand_id)
        self._pending_history.append(rec)
        self._flush_history()

    def _flush_history(self) -> None:
        if self._bus is None:
            return  # replay: sent once connected
        if self._pending_history:
            self._sync_now()
        while self._pending_history:
            rec = self._pending_history.pop(0)
            self._bus.publish(Channel.HISTORY, "hand", hand=rec["hand"], variant=rec["variant"],
                              events=rec["events"], phh=rec["phh"])

    # -- history queries (engine.handlog) ------------------------------------------------
    def _history_allowed(self, source: str) -> bool:
        """A token bucket per console: HISTORY_BURST queries at once, HISTORY_PER_S a second after."""
        now = time.monotonic()
        if len(self._history_budget) > MAX_FORGED_NAMES:  # a console naming a new console each time
            self._history_budget.clear()
        tokens, then = self._history_budget.get(source, (float(HISTORY_BURST), now))
        tokens = min(float(HISTORY_BURST), tokens + (now - then) * HISTORY_PER_S)
        if tokens < 1.0:
            self._history_budget[source] = (tokens, now)
            return False
        self._history_budget[source] = (tokens - 1.0, now)
        return True

    def _answer_history(self, msg: Message) -> None:
        """Answer a console's history query on ``console/history`` (only the console role reads it),
        from the hand log: finished hands' hole cards for a role allowed them, never a live one's.

        What the answer needs is copied here, under the engine's lock (the index, the live hand's
        events); the folding, the store read and the publish happen on the history thread, so a
        query (about 40 ms for a 60-event hand) never holds up the table's inputs."""
        if self._bus is None:
            return  # replay: a query is answered once, when it comes
        if self._history_jobs.qsize() >= MAX_HISTORY_QUEUED:
            # A flood of queries (review F13: 1000 of them held the next shoe card for 5 s) is told
            # to wait, cheaply, instead of queueing an answer each: the table's inputs come first.
            self._send_answer({"request": msg.body.get("request"), "hands": [], "hand": None,
                               "error": f"the engine is answering {MAX_HISTORY_QUEUED} history queries already: "
                                        "ask again in a moment"})
            return
        role = device_role(msg.source) or Role.MONITOR
        live = self.core.floor.table.hand
        playing = live is not None and not live.is_over
        job = (dict(msg.body), role, list(self.core.index),
               handlog.marked_events(live, self.core.provenance.of(live)) if live is not None and playing else None)
        self._history_jobs.put(job)

    def _history_worker(self) -> None:
        while True:
            job = self._history_jobs.get()
            if job is None:
                return
            query, role, index, live = job

            def fetch(hid: str) -> list[Any] | None:
                record = self.store.get_hand(hid)
                return list(record.events) if record is not None else None

            try:
                body = handlog.answer(query, role=role, table_id=self.config.table, index=index, live=live,
                                      fetch=fetch, hand_id_of=lambda n: f"{self.config.table}-{n}")
            except Exception as exc:  # a hand log the engine cannot read or fold: said, never raised
                log.exception("history query %s failed", query.get("request"))
                body = {"request": query.get("request"), "hands": [], "hand": None,
                        "error": f"the hand log cannot answer: {type(exc).__name__}"}
            self._send_answer(body)

    def _send_answer(self, body: dict[str, Any]) -> None:
        from engine.wire import MAX_PAYLOAD_BYTES, WireError

        body = handlog.fit(body, MAX_PAYLOAD_BYTES - 4096)  # a very long hand: without its table pictures
        try:
            self._bus.publish(Channel.HISTORY_REPLY, "answer", **body)
        except WireError:
            log.exception("the history answer could not be sent")

    def _on_invalid(self, topic_name: str, payload: bytes, exc: Exception) -> None:
        """A history query the wire contract refused: the console is told why on ``console/history``
        (nothing was stored; the table does not change)."""
        from engine.wire import MAX_PAYLOAD_BYTES, WireError, parse_topic

        try:
            if parse_topic(topic_name).channel is not Channel.COMMAND or len(payload) > MAX_PAYLOAD_BYTES:
                return
            doc = json.loads(payload)
        except (WireError, ValueError, RecursionError):
            return
        if not isinstance(doc, dict) or doc.get("kind") != "history" or self._bus is None:
            return
        request = doc.get("request")
        if not isinstance(request, str) or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}", request):
            request = None
        reason = str(exc).removeprefix(f"{topic_name}: ")
        self._send_answer({"request": request, "hands": [], "hand": None,
                           "error": f"history query refused: {reason}"[:500]})

    def publish(self, *, again: bool = False, unless_same: bool = False) -> None:
        """Publish the state; and the open prompts when they changed (or ``again``: at start and
        after a reconnect, when the broker may have lost its retained copy).  ``unless_same``:
        not when the state and prompts are those sent last (but for the devices' ages) and were
        sent less than HEARD_REFRESH_S ago.  Whatever is stored is made durable first."""
        if self._bus is None:
            return
        now = time.monotonic()
        state = self.core.state(now)
        prompts = self.core.prompts()
        if self._store_prompt is not None:  # outside the Floor and the log: it goes when the store writes
            state["prompts"] = [*state.get("prompts", []), self._store_prompt.to_json()]
            prompts = [*prompts, self._store_prompt.to_wire()]
        if len(prompts) > MAX_WIRE_PROMPTS:
            # The wire carries at most 32: the oldest are kept (the store prompt, last, goes in
            # their place) rather than failing the publish after an input is stored (not yet acked).
            log.error("%d prompts open, more than the %d dealer/prompt carries: sending the first ones",
                      len(prompts), MAX_WIRE_PROMPTS)
            keep = prompts[-1:] if self._store_prompt is not None else []
            prompts = prompts[:MAX_WIRE_PROMPTS - len(keep)] + keep
        from engine.store import StoreError
        from engine.wire import WireError

        # What the table shows, less what changes with every message (the devices' ages, the
        # key of the last input taken).
        sent = {**state, "input": None, "devices": {d: {k: v for k, v in info.items() if k != "last_seen_s"}
                                                    for d, info in state.get("devices", {}).items()}}
        if unless_same and not again and sent == self._state_sent and prompts == self._prompts_sent \
                and now - self._state_sent_at < HEARD_REFRESH_S:
            return  # nothing to show: and nothing made durable for it
        try:
            self._sync_now()  # an input's effects are shown only once it is durable
        except StoreError as exc:
            log.error("%s; the state is not published until the store syncs", exc)
            return
        try:
            self._bus.publish(Channel.STATE, "state", state=state)
            self._state_sent, self._state_sent_at = sent, now
        except WireError:
            log.exception("the state could not be published; the next input publishes it again")
        if self._tracing is not None and not self._tracing.published:
            self._tracing.published = time.monotonic()
        if again or prompts != self._prompts_sent:
            try:
                self._bus.publish(Channel.PROMPT, "prompts", open=prompts)
            except WireError:
                log.exception("the prompts could not be published; the next change publishes them again")
                return
            self._prompts_sent = prompts
