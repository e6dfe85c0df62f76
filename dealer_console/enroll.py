"""The deck enrollment wizard: show each of the 52 cards in turn, read its tag, save the deck.

Why the console does this: a cardroom enrolls a new deck at the table, with
the shoe that will deal it, and the dealer needs to see which card to draw
next and be told at once when a tag or a card is repeated.  The rules of
enrollment (52 distinct cards with 52 distinct tags, no tag of another deck)
are ``firmware_bridge.deck.Enrollment``'s; the wizard only shows its state.

``TagSource`` is the small interface to the reader: ``start(callback)`` calls
back with each tag UID read (from any thread), ``stop()`` ends it.
``ShoeTagSource`` reads the shoe through the bridge's serial session.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from dealer_console.cards import CardImages, card_name
from dealer_console.widgets import _font
from engine.cards import Card
from firmware_bridge.deck import DeckError, DeckRegistry, Enrollment, default_decks_dir


class TagSource(Protocol):
    def start(self, on_tag: Callable[[bytes], None]) -> None: ...

    def stop(self) -> None: ...


class ShoeTagSource:
    """Tags drawn through the RFID shoe on ``port`` (a device path or a pyserial URL)."""

    def __init__(self, port: str, baud: int = 115200) -> None:
        self.port, self.baud = port, baud
        self._bridge: Any = None

    def start(self, on_tag: Callable[[bytes], None]) -> None:
        from engine import wire
        from firmware_bridge.bridge import BridgeCore, SerialBridge

        def sink(msg: wire.Message) -> None:
            if msg.kind == "card_drawn":
                on_tag(bytes.fromhex(str(msg.body["uid"])))

        self._bridge = SerialBridge(self.port, BridgeCore("enroll", "enroll", 1, None, sink), baud=self.baud).start()

    def stop(self) -> None:
        if self._bridge is not None:
            self._bridge.stop()
            self._bridge = None


class _TagRelay(QObject):
    """Carries a tag from the reader's thread to the GUI thread."""

    tag = Signal(bytes)


class EnrollWizard(QWidget):
    saved = Signal(str)

    def __init__(self, images: CardImages, tag_source: Callable[[], TagSource] | None = None,
                 decks_dir: str | Path | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.images = images
        self.make_source = tag_source
        self.registry = DeckRegistry(Path(decks_dir) if decks_dir else default_decks_dir())
        self.source: TagSource | None = None
        self.enrollment: Enrollment | None = None
        self.skipped: list[Card] = []
        self.relay = _TagRelay(self)
        self.relay.tag.connect(self.on_tag)

        h = QHBoxLayout(self)
        left = QVBoxLayout()
        self.card = QLabel()
        self.card.setObjectName("enrollCard")
        self.card.setFixedSize(240, 336)
        self.card.setAlignment(Qt.AlignmentFlag.AlignCenter)
        left.addWidget(self.card)
        left.addStretch(1)
        h.addLayout(left)
        right = QVBoxLayout()
        row = QHBoxLayout()
        self.name = QLineEdit()
        self.name.setObjectName("enrollName")
        self.name.setPlaceholderText("deck name, e.g. red-1")
        self.name.setMinimumHeight(48)  # a touch control (issue 21, 10)
        self.name.setFont(_font(18))
        row.addWidget(self.name, 1)
        self.start_button = QPushButton("Start")
        self.start_button.setObjectName("enrollStart")
        row.addWidget(self.start_button)
        right.addLayout(row)
        self.prompt = QLabel("Name the deck and press Start.")
        self.prompt.setObjectName("enrollPrompt")
        self.prompt.setFont(_font(28, True))
        self.prompt.setWordWrap(True)
        right.addWidget(self.prompt)
        self.progress = QProgressBar()
        self.progress.setObjectName("enrollProgress")
        self.progress.setRange(0, 52)
        self.progress.setFormat("%v of 52 cards")
        right.addWidget(self.progress)
        self.log = QListWidget()
        self.log.setObjectName("enrollLog")
        right.addWidget(self.log, 1)
        buttons = QHBoxLayout()
        self.skip = QPushButton("Card not here: skip")
        self.skip.setObjectName("enrollSkip")
        self.save = QPushButton("Save deck")
        self.save.setObjectName("enrollSave")
        for b in (self.start_button, self.skip, self.save):
            b.setMinimumHeight(50)
            b.setFont(_font(17, True))
        buttons.addWidget(self.skip)
        buttons.addWidget(self.save)
        right.addLayout(buttons)
        h.addLayout(right, 1)
        self.start_button.clicked.connect(self.start)
        self.skip.clicked.connect(self.skip_card)
        self.save.clicked.connect(self.finish)
        self.skip.setEnabled(False)
        self.save.setEnabled(False)

    # -- flow ---------------------------------------------------------------
    def start(self) -> None:
        name = self.name.text().strip()
        if not name:
            self.prompt.setText("Name the deck first.")
            return
        try:
            self.enrollment = Enrollment(name, self.registry.tag_index())
        except DeckError as exc:
            self.prompt.setText(str(exc))
            return
        self.skipped = []
        self.log.clear()
        if self.make_source is not None and self.source is None:
            self.source = self.make_source()
            self.source.start(self.relay.tag.emit)
        self.skip.setEnabled(True)
        self.save.setEnabled(False)
        self._show_next()

    def expected(self) -> Card | None:
        """The card to draw next: the first not yet enrolled and not skipped (then the skipped ones)."""
        if self.enrollment is None:
            return None
        missing = self.enrollment.missing()
        fresh = [c for c in missing if c not in self.skipped]
        return fresh[0] if fresh else missing[0] if missing else None

    def on_tag(self, uid: bytes) -> None:
        card = self.expected()
        if self.enrollment is None or card is None:
            return
        try:
            self.enrollment.add(uid, card)
        except DeckError as exc:
            self.log.insertItem(0, f"✗ {exc}")
            self.log.item(0).setForeground(Qt.GlobalColor.red)
        else:
            if card in self.skipped:
                self.skipped.remove(card)
            self.log.insertItem(0, f"✓ {card} {card_name(str(card))}  tag {uid.hex(':')}")
        self._show_next()

    def skip_card(self) -> None:
        card = self.expected()
        if card is not None and card not in self.skipped:
            self.skipped.append(card)
            self.log.insertItem(0, f"… {card} skipped; it will be asked for again at the end")
        self._show_next()

    def _show_next(self) -> None:
        e = self.enrollment
        if e is None:
            return
        done = len(e.pairs)
        self.progress.setValue(done)
        card = self.expected()
        if card is None:
            self.prompt.setText("All 52 cards read. Press Save deck.")
            self.card.clear()
            self.save.setEnabled(True)
            self.skip.setEnabled(False)
            return
        missing = e.missing()
        extra = f"  ({len(missing)} to go; missing so far: {' '.join(map(str, self.skipped))})" if self.skipped else ""
        self.prompt.setText(f"Draw the {card_name(str(card))} ({card}){extra}")
        self.card.setPixmap(self.images.pixmap(str(card), 330))
        self.save.setEnabled(True)  # saving checks the whole deck and reports what is missing

    def finish(self) -> None:
        e = self.enrollment
        if e is None:
            return
        if not e.complete:
            missing = e.missing()
            self.prompt.setText(f"Deck incomplete: {len(missing)} missing: {' '.join(map(str, missing))}")
            return
        try:
            path = self.registry.save(e.finish())
        except DeckError as exc:
            self.prompt.setText(f"Not saved: {exc}")
            return
        if self.source is not None:
            self.source.stop()
            self.source = None
        self.prompt.setText(f"Deck {e.name} saved ({path}).")
        self.saved.emit(str(path))
