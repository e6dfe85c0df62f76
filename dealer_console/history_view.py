"""The hand history browser: pick a hand, step through it, see the table and the pot at every step.

The steps come from ``history.replay_steps`` (the engine folding the hand's
log); this widget lists and draws them.  The floor uses it to reconstruct
the betting for a ruling.
"""

from __future__ import annotations

from PySide6.QtWidgets import QHBoxLayout, QLabel, QListWidget, QPushButton, QVBoxLayout, QWidget

from dealer_console.cards import CardImages
from dealer_console.history import HandListing, HistorySource, ReplayStep, replay_steps
from dealer_console.snapshot import read_state
from dealer_console.widgets import TableView, _font


class HistoryBrowser(QWidget):
    def __init__(self, source: HistorySource | None, images: CardImages, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.source = source
        self.listings: list[HandListing] = []
        self.steps: list[ReplayStep] = []
        h = QHBoxLayout(self)
        h.setContentsMargins(0, 0, 0, 0)
        left = QVBoxLayout()
        title = QLabel("Hands")
        title.setFont(_font(17, True))
        left.addWidget(title)
        self.hands = QListWidget()
        self.hands.setObjectName("historyHands")
        self.hands.setFixedWidth(230)
        left.addWidget(self.hands, 1)
        self.message = QLabel("")
        self.message.setWordWrap(True)
        self.message.setFixedWidth(230)
        left.addWidget(self.message)
        h.addLayout(left)
        mid = QVBoxLayout()
        t2 = QLabel("Steps (pot after each)")
        t2.setFont(_font(17, True))
        mid.addWidget(t2)
        self.step_list = QListWidget()
        self.step_list.setObjectName("historySteps")
        self.step_list.setFixedWidth(340)
        mid.addWidget(self.step_list, 1)
        nav = QHBoxLayout()
        self.prev = QPushButton("◀ Back")
        self.next = QPushButton("Next ▶")
        for b in (self.prev, self.next):
            b.setMinimumHeight(50)
            b.setFont(_font(17, True))
            nav.addWidget(b)
        mid.addLayout(nav)
        h.addLayout(mid)
        right = QVBoxLayout()
        self.step_text = QLabel("")
        self.step_text.setObjectName("historyStepText")
        self.step_text.setFont(_font(20, True))
        right.addWidget(self.step_text)
        self.pot = QLabel("")
        self.pot.setObjectName("historyPot")
        self.pot.setFont(_font(26, True))
        self.pot.setStyleSheet("color: #ffe9a8;")
        right.addWidget(self.pot)
        self.table = TableView(images)
        right.addWidget(self.table, 1)
        h.addLayout(right, 1)
        self.hands.currentRowChanged.connect(self.open_hand)
        self.step_list.currentRowChanged.connect(self.show_step)
        self.prev.clicked.connect(lambda: self.step_list.setCurrentRow(max(0, self.step_list.currentRow() - 1)))
        self.next.clicked.connect(
            lambda: self.step_list.setCurrentRow(min(self.step_list.count() - 1, self.step_list.currentRow() + 1)))

    def reload(self) -> None:
        """Read the list of hands again (newest first)."""
        self.hands.clear()
        self.listings = []
        if self.source is None:
            self.message.setText("No hand log configured (history_db in the console config).")
            return
        try:
            self.listings = self.source.hands()
        except (OSError, ValueError, RuntimeError) as exc:
            self.message.setText(f"Cannot read the hand log: {exc}")
            return
        self.message.setText("" if self.listings else "No finished hands yet.")
        for listing in self.listings:
            self.hands.addItem(listing.label)
        if self.listings:
            self.hands.setCurrentRow(0)

    def open_hand(self, row: int) -> None:
        self.step_list.clear()
        self.steps = []
        if self.source is None or not 0 <= row < len(self.listings):
            return
        try:
            self.steps = replay_steps(self.source.events(self.listings[row].hand_id))
        except (ValueError, KeyError, OSError) as exc:  # a log the engine cannot fold: say so, do not guess
            self.message.setText(f"Hand {self.listings[row].hand_id} cannot be replayed: {exc}")
            return
        for s in self.steps:
            self.step_list.addItem(f"{s.index + 1:>3}. {s.text}  — pot {s.pot:,}")
        self.step_list.setCurrentRow(0)

    def show_step(self, row: int) -> None:
        if not 0 <= row < len(self.steps):
            return
        step = self.steps[row]
        self.step_text.setText(f"Step {step.index + 1} of {len(self.steps)}: {step.text}")
        street = f" · {step.street}" if step.street else ""
        self.pot.setText(f"Pot {step.pot:,}{street}")
        self.table.show_snapshot(read_state(step.state))
