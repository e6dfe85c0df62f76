"""The hand history browser: find a hand, step through it, see the table and the pot at every step,
export it.

The floor uses it to reconstruct the betting for a ruling.  Hands and steps come from the engine
over the bus (``dealer_console.history``); this widget asks, lists and draws.  Every control has a
stable accessible name (docs/console.md): ``history.search`` (what is typed, on the on-screen
keyboard and number pad shown by ``history.keys``), ``history.find.hand`` / ``.seat`` / ``.player``
/ ``.all``, ``history.hands``, ``history.more``, ``history.steps``, ``history.back`` /
``history.next``, ``history.step``, ``history.step-cards``, ``history.pot``, ``history.export``,
``history.export-folder``, ``history.export-choose``, ``history.export-status``, ``history.message``.
Step lines wrap; none is cut short.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from dealer_console.cards import CardImages
from dealer_console.controls import ROW_PX, NumberPad, OnScreenKeyboard, button, named
from dealer_console.history import (
    HandListing,
    HistorySource,
    ReplayStep,
    export_hand,
    listings,
    search_query,
    steps,
)
from dealer_console.snapshot import read_state
from dealer_console.widgets import TableView, _font

#: how long the page waits for the engine's answer before it says the engine did not answer
ANSWER_TIMEOUT_MS = 8000
DEFAULT_EXPORT_DIR = "~/studtable-hands"
PAGE = 20


class HistoryBrowser(QWidget):
    def __init__(self, source: HistorySource | None, images: CardImages, parent: QWidget | None = None,
                 export_dir: str = DEFAULT_EXPORT_DIR) -> None:
        super().__init__(parent)
        self.source = source
        self.images = images
        self.listings: list[HandListing] = []
        self.steps: list[ReplayStep] = []
        self.detail: Mapping[str, Any] | None = None
        self.query: dict[str, Any] = {"limit": PAGE}
        self.typed = ""
        self.export_dir = export_dir
        self.asked = 0  # the answer the page waits for (an older one is dropped)
        self.answer_timeout_ms = ANSWER_TIMEOUT_MS
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(lambda: self._say("The engine did not answer; is it running?"))
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)

        # search: what is typed, and how to search it
        bar = QHBoxLayout()
        self.search = QLabel("")
        named(self.search, "history.search")
        self.search.setMinimumHeight(ROW_PX)
        self.search.setMinimumWidth(160)
        self.search.setFont(_font(18, True))
        self.search.setStyleSheet("background: #1b2220; border: 1px solid #3c4a45; border-radius: 6px; "
                                  "padding: 4px 8px;")
        bar.addWidget(self.search, 2)
        self.keys = button("Keys", "history.keys")
        self.keys.setCheckable(True)
        bar.addWidget(self.keys)
        self.find_buttons: dict[str, QPushButton] = {}
        for by, label in (("hand", "Hand #"), ("seat", "Seat"), ("player", "Player"), ("all", "All hands")):
            b = button(label, f"history.find.{by}")
            b.clicked.connect(lambda _=False, by=by: self.search_by(by))
            bar.addWidget(b)
            self.find_buttons[by] = b
        outer.addLayout(bar)
        self.pads = QWidget()
        pads = QHBoxLayout(self.pads)
        pads.setContentsMargins(0, 0, 0, 0)
        self.keyboard = OnScreenKeyboard()
        self.keyboard.typed.connect(self._type)
        self.numpad = NumberPad()
        self.numpad.typed.connect(self._type)
        pads.addWidget(self.keyboard, 3)
        pads.addWidget(self.numpad, 1)
        self.pads.setVisible(False)
        outer.addWidget(self.pads, 1)

        # the hands, the steps and the step: in place of the keys while they are shown (a small screen)
        self.body = QWidget()
        h = QHBoxLayout(self.body)
        h.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(self.body, 1)
        self.keys.toggled.connect(self._show_keys)
        left = QVBoxLayout()
        title = QLabel("Hands")
        title.setFont(_font(17, True))
        left.addWidget(title)
        self.hands = QListWidget()
        named(self.hands, "history.hands")
        self.hands.setFixedWidth(200)
        self._wrap(self.hands)
        left.addWidget(self.hands, 1)
        self.more = button("Older hands", "history.more")
        self.more.clicked.connect(self.older)
        left.addWidget(self.more)
        self.message = QLabel("")
        named(self.message, "history.message")
        self.message.setWordWrap(True)
        self.message.setFixedWidth(200)
        left.addWidget(self.message)
        self.export_status = QLabel("")
        named(self.export_status, "history.export-status")
        self.export_status.setWordWrap(True)
        self.export_status.setFixedWidth(200)
        left.addWidget(self.export_status)
        h.addLayout(left)
        mid = QVBoxLayout()
        t2 = QLabel("Steps: time · source · what happened — pot")
        t2.setFont(_font(15, True))
        mid.addWidget(t2)
        self.step_list = QListWidget()
        named(self.step_list, "history.steps")
        self.step_list.setMinimumWidth(330)
        self._wrap(self.step_list)
        mid.addWidget(self.step_list, 1)
        nav = QHBoxLayout()
        self.prev = button("◀ Back", "history.back", px=17)
        self.next = button("Next ▶", "history.next", px=17)
        nav.addWidget(self.prev)
        nav.addWidget(self.next)
        mid.addLayout(nav)
        h.addLayout(mid, 1)
        right = QVBoxLayout()
        self.step_text = QLabel("")
        named(self.step_text, "history.step")
        self.step_text.setFont(_font(18, True))
        self.step_text.setWordWrap(True)
        right.addWidget(self.step_text)
        row = QHBoxLayout()
        self.step_cards = QWidget()
        named(self.step_cards, "history.step-cards")
        self.step_cards.setMinimumHeight(64)
        self._cards = QHBoxLayout(self.step_cards)
        self._cards.setContentsMargins(0, 0, 0, 0)
        self._cards.addStretch(1)
        row.addWidget(self.step_cards, 1)
        self.pot = QLabel("")
        named(self.pot, "history.pot")
        self.pot.setFont(_font(22, True))
        self.pot.setStyleSheet("color: #ffe9a8;")
        row.addWidget(self.pot)
        right.addLayout(row)
        self.table = TableView(images)
        self.table.setMinimumSize(320, 180)  # the page fits a 1024x600 screen beside the steps
        right.addWidget(self.table, 1)
        ex = QHBoxLayout()
        self.export_folder = QLabel(self.export_dir)
        named(self.export_folder, "history.export-folder")
        self.export_folder.setWordWrap(True)
        ex.addWidget(self.export_folder, 1)
        self.choose = button("Folder…", "history.export-choose")
        self.choose.clicked.connect(self._choose_folder)
        ex.addWidget(self.choose)
        self.export = button("Export hand", "history.export")
        self.export.clicked.connect(self.export_current)
        ex.addWidget(self.export)
        right.addLayout(ex)
        h.addLayout(right, 1)
        self.hands.currentRowChanged.connect(self.open_hand)
        self.step_list.currentRowChanged.connect(self.show_step)
        self.prev.clicked.connect(lambda: self.step_list.setCurrentRow(max(0, self.step_list.currentRow() - 1)))
        self.next.clicked.connect(
            lambda: self.step_list.setCurrentRow(min(self.step_list.count() - 1, self.step_list.currentRow() + 1)))
        self.export.setEnabled(False)

    @staticmethod
    def _wrap(view: QListWidget) -> None:
        """Rows as tall as their text: a long step wraps instead of being cut (nothing clipped)."""
        view.setWordWrap(True)
        view.setTextElideMode(Qt.TextElideMode.ElideNone)
        view.setUniformItemSizes(False)
        view.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        view.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        view.setStyleSheet("QListWidget::item { min-height: 44px; padding: 2px; }")

    # -- asking -----------------------------------------------------------------
    def _ask(self, query: Mapping[str, Any], then: Any) -> None:
        if self.source is None:
            self._say("This screen has no connection to the engine's hand log.")
            return
        self.asked += 1
        mine = self.asked

        def reply(answer: Mapping[str, Any]) -> None:
            if mine != self.asked:
                return  # a later question was asked meanwhile
            self._timer.stop()
            then(answer)

        self._timer.start(self.answer_timeout_ms)
        self.source.ask(query, reply)

    def _show_keys(self, on: bool) -> None:
        # One hidden before the other is shown: both at once would ask a small screen for more room.
        for widget, show in ((self.body, not on), (self.pads, on)) if on else ((self.pads, on), (self.body, not on)):
            widget.setVisible(show)

    def _say(self, text: str) -> None:
        self.message.setText(text)

    def _type(self, ch: str) -> None:
        self.typed = self.typed[:-1] if ch == "\b" else (self.typed + ch)[:40]
        self.search.setText(self.typed)

    def reload(self) -> None:
        """Ask again for the hands of the current search (newest first)."""
        self._ask(self.query, self._listed)

    def search_by(self, by: str) -> None:
        self.keys.setChecked(False)  # the results in place of the keys
        query = search_query(by, self.typed, PAGE)
        if isinstance(query, str):
            self._say(query)
            return
        self.query = query
        self._ask(query, self._listed)

    def older(self) -> None:
        """The next page: hands below the oldest one listed."""
        finished = [x.number for x in self.listings if not x.live]
        if not finished:
            return
        query = {**{k: v for k, v in self.query.items() if k != "hand"}, "before": min(finished), "limit": PAGE}
        self._ask(query, lambda a: self._listed(a, more=True))

    def _listed(self, answer: Mapping[str, Any], more: bool = False) -> None:
        found = listings(answer)
        if not more:
            self.hands.blockSignals(True)
            self.hands.clear()
            self.hands.blockSignals(False)
            self.listings = []
        self.listings += found
        for listing in found:
            self.hands.addItem(listing.label)
        if answer.get("error"):
            self._say(str(answer["error"]))
        elif not self.listings:
            self._say("No hands found." if len(self.query) > 1 else "No finished hands yet.")
        else:
            self._say("" if found or not more else "No older hands.")
        self.more.setEnabled(len(found) >= int(self.query.get("limit", PAGE)) > 1)
        detail = answer.get("hand")
        if detail is not None and not more:
            self.hands.blockSignals(True)
            self.hands.setCurrentRow(0)
            self.hands.blockSignals(False)
            self._opened(answer)
        elif self.listings and not more:
            self.hands.setCurrentRow(0)

    def open_hand(self, row: int) -> None:
        if not 0 <= row < len(self.listings):
            return
        self._ask({"hand": self.listings[row].number, "limit": 1}, self._opened)

    def _opened(self, answer: Mapping[str, Any]) -> None:
        self.step_list.clear()
        self.steps = []
        self.detail = answer.get("hand")
        self.export_status.setText("")
        if self.detail is None:
            self._say(str(answer.get("error") or "The engine sent no steps for that hand."))
            self.export.setEnabled(False)
            return
        self.steps = steps(self.detail)
        for s in self.steps:
            self.step_list.addItem(s.line)
        live = bool(self.detail.get("live"))
        self.export.setEnabled(not live and bool(self.detail.get("phh")))
        if live:
            self._say(f"Hand {self.detail['number']} is being played: down cards are not shown until it is over.")
        elif any(s.state is None for s in self.steps):
            self._say("A very long hand: the steps are whole, the table picture is left out.")
        else:
            self._say("")
        self.step_list.setCurrentRow(0)

    def show_step(self, row: int) -> None:
        if not 0 <= row < len(self.steps):
            return
        step = self.steps[row]
        self.step_text.setText(f"Step {step.index + 1} of {len(self.steps)}: {step.text}")
        street = f" · {step.street}" if step.street else ""
        self.pot.setText(f"Pot {step.pot:,}{street}")
        while self._cards.count() > 1:
            item = self._cards.takeAt(0)
            widget = item.widget() if item is not None else None
            if widget is not None:
                widget.deleteLater()
        for i, code in enumerate(step.cards):
            label = QLabel()
            label.setAccessibleName(f"history.step-card.{code}")
            label.setPixmap(self.images.pixmap(code, 60))
            label.setToolTip(code)
            self._cards.insertWidget(i, label)
            label.show()
        if step.state is not None:
            self.table.show_snapshot(read_state(step.state))

    # -- export -----------------------------------------------------------------
    def _choose_folder(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Export hands to", str(Path(self.export_dir).expanduser()))
        if folder:
            self.export_dir = folder
            self.export_folder.setText(folder)

    def export_current(self) -> None:
        if self.detail is None:
            return
        try:
            written = export_hand(self.detail, self.export_dir)
        except (OSError, ValueError) as exc:
            self.export_status.setText(f"Not exported: {exc}")
            return
        self.export_status.setText("Exported: " + ", ".join(str(p) for p in written))
