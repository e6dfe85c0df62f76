"""The dealer's touch controls beyond the betting buttons: showdown, the card picker, seating, refusals.

Every control carries a stable Qt ``accessibleName`` (``docs/console.md`` lists them), so a
test, the demo's simulated dealer or an accessibility tool drives the console by name:
``showdown.show``, ``card-picker.Ah``, ``seat.3.sit-down``, ``keyboard.A``, ``numpad.5`` ...
None of these widgets decides poker: the showdown panel shows the seat the engine says is to
show, the manual panel presets the seat and up/down from the engine's ``next_deal``, the
seating panel sends ``table`` commands and the engine checks the buy-in.

``TapGuard`` is the double-tap guard (issue 21, 4): a press on the same spot (within
``radius`` px) within ``interval_s`` of the last accepted tap is swallowed, so a nervous double
tap completes for one player and does not also raise for the next.  The action bar also holds
back a new player's buttons while a finger is still down on the screen (``ActionBar``).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, QPointF, Qt, Signal
from PySide6.QtGui import QMouseEvent
from PySide6.QtWidgets import (
    QButtonGroup,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from dealer_console.snapshot import TableSnapshot
from engine.citations import in_words

RANKS = "AKQJT98765432"
SUITS = "shdc"
SUIT_SIGN = {"s": "\u2660", "h": "\u2665", "d": "\u2666", "c": "\u2663"}
SUIT_COLOUR = {"s": "#e8ece9", "h": "#ff6b6b", "d": "#ff9f43", "c": "#7ee2a1"}
ROW_PX = 48  # the least height of any touch control (issue 21, 10)


def named(widget: QWidget, name: str) -> QWidget:
    """Give a control its stable accessible name (and the same object name for style sheets)."""
    widget.setAccessibleName(name)
    widget.setObjectName(name)
    return widget


def button(text: str, name: str, *, height: int = ROW_PX, px: int = 16, style: str = "") -> QPushButton:
    from dealer_console.widgets import _font

    b = QPushButton(text)
    named(b, name)
    b.setMinimumHeight(height)
    b.setFont(_font(px, True))
    if style:
        b.setStyleSheet(style)
    return b


class RefusalLabel(QLabel):
    """What the engine refused, in its words, beside the control that sent it (empty: hidden)."""

    def __init__(self, area: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        named(self, f"refusal.{area}")
        self.setWordWrap(True)
        self.setStyleSheet("color: #ffd0c8; background: #5a1616; border-radius: 8px; padding: 6px 10px;"
                           " font-size: 16px; font-weight: bold;")
        self.hide()

    def show_reason(self, reason: str | None) -> None:
        if reason:
            self.setText(f"Not taken: {in_words(reason)}")  # the rule in words (engine/citations.py)
            self.show()
        else:
            self.clear()
            self.hide()


class TapGuard(QObject):
    """Swallows a second tap on the same spot within ``interval_s`` (an event filter on buttons)."""

    def __init__(self, interval_s: float = 0.4, radius: float = 60.0, clock: Callable[[], float] = time.monotonic,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.interval_s = interval_s
        self.radius = radius
        self.clock = clock
        self.last_at = -1e9
        self.last_pos = QPointF(-1e6, -1e6)
        self.swallowed = 0
        self._eat_release: set[int] = set()

    def guard(self, widget: QWidget) -> None:
        widget.installEventFilter(self)

    def wait_needed(self, global_pos: QPointF) -> float:
        """Seconds until a tap at ``global_pos`` would be taken (0: now)."""
        if (global_pos - self.last_pos).manhattanLength() > self.radius:
            return 0.0
        return max(0.0, self.interval_s - (self.clock() - self.last_at))

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        kind = event.type()
        if kind == QEvent.Type.MouseButtonDblClick:
            self.swallowed += 1
            return True
        if kind == QEvent.Type.MouseButtonPress and isinstance(event, QMouseEvent):
            pos = event.globalPosition()
            if self.wait_needed(pos) > 0:
                self.swallowed += 1
                self._eat_release.add(id(watched))
                return True
            self.last_at, self.last_pos = self.clock(), QPointF(pos)
        elif kind == QEvent.Type.MouseButtonRelease and id(watched) in self._eat_release:
            self._eat_release.discard(id(watched))
            return True
        return False


# --------------------------------------------------------------------------- the card picker


class CardPicker(QWidget):
    """All 52 cards as touch buttons (``card-picker.Ah``), plus unknown (``card-picker.unknown``).

    ``begin(title, count, allow_unknown)`` opens it for ``count`` cards; each tap adds one; with
    one card to pick it emits ``picked`` at once, with more the dealer taps ``card-picker.done``.
    """

    picked = Signal(list)  # list[str] of card codes ("??" for unknown)
    cancelled = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        from dealer_console.widgets import _font

        super().__init__(parent)
        named(self, "card-picker")
        v = QVBoxLayout(self)
        v.setContentsMargins(6, 6, 6, 6)
        v.setSpacing(6)
        self.title = QLabel("")
        named(self.title, "card-picker.title")
        self.title.setFont(_font(17, True))
        self.title.setWordWrap(True)
        v.addWidget(self.title)
        grid = QGridLayout()
        grid.setSpacing(4)
        self.cards: dict[str, QPushButton] = {}
        for r, suit in enumerate(SUITS):
            for c, rank in enumerate(RANKS):
                code = rank + suit
                label = ("10" if rank == "T" else rank) + SUIT_SIGN[suit]
                b = button(label, f"card-picker.{code}", px=19)  # ROW_PX high: a finger's width at 1024x600
                b.setMinimumWidth(44)
                b.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
                b.setStyleSheet(f"QPushButton {{ color: {SUIT_COLOUR[suit]}; background: #1f2a27; border: 1px solid"
                                f" #3c4a45; border-radius: 8px; }} QPushButton:disabled {{ color: #3c4a45; }}")
                b.clicked.connect(lambda _=False, code=code: self._tap(code))
                grid.addWidget(b, r, c)
                self.cards[code] = b
        v.addLayout(grid, 1)
        row = QHBoxLayout()
        self.chosen = QLabel("")
        named(self.chosen, "card-picker.chosen")
        self.chosen.setFont(_font(20, True))
        row.addWidget(self.chosen, 1)
        self.unknown = button("Unknown (??)", "card-picker.unknown")
        self.unknown.clicked.connect(lambda: self._tap("??"))
        self.undo = button("Back", "card-picker.back")
        self.undo.clicked.connect(self._back)
        self.done = button("Done", "card-picker.done", style="QPushButton { background: #2b8a4a; }")
        self.done.clicked.connect(self._done)
        self.cancel = button("Cancel", "card-picker.cancel")
        self.cancel.clicked.connect(self._cancel)
        for b in (self.unknown, self.undo, self.done, self.cancel):
            b.setMinimumWidth(110)
            row.addWidget(b)
        v.addLayout(row)
        self.count = 1
        self.selection: list[str] = []
        self.allow_unknown = False

    def begin(self, title: str, count: int = 1, allow_unknown: bool = False) -> None:
        self.title.setText(title)
        self.count = max(1, count)
        self.allow_unknown = allow_unknown
        self.selection = []
        self._refresh()

    def _refresh(self) -> None:
        for code, b in self.cards.items():
            b.setEnabled(code not in self.selection)
        self.unknown.setVisible(self.allow_unknown)
        self.done.setVisible(self.count > 1)
        self.done.setEnabled(len(self.selection) == self.count)
        self.undo.setVisible(self.count > 1)
        self.chosen.setText(" ".join(self.selection) + (f"   ({len(self.selection)} of {self.count})"
                                                        if self.count > 1 else ""))

    def _tap(self, code: str) -> None:
        if len(self.selection) >= self.count:
            return
        self.selection.append(code)
        self._refresh()
        if self.count == 1:
            self.picked.emit(list(self.selection))

    def _back(self) -> None:
        if self.selection:
            self.selection.pop()
        self._refresh()

    def _done(self) -> None:
        if len(self.selection) == self.count:
            self.picked.emit(list(self.selection))

    def _cancel(self) -> None:
        self.selection = []
        self.cancelled.emit()


# --------------------------------------------------------------------------- showdown


class ShowdownPanel(QWidget):
    """The seat to show (the engine's order, 002 3.6): show as dealt, pick the cards, muck, or kill
    (002 3.3(d): a hand without the proper number of cards is dead; the engine asks to confirm)."""

    show_known = Signal(int)  # seat: show the cards the shoe and camera identified
    pick = Signal(int)  # seat: the dealer keys the shown cards on the picker
    muck = Signal(int)
    kill = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        from dealer_console.widgets import _font

        super().__init__(parent)
        named(self, "showdown")
        v = QVBoxLayout(self)
        v.setContentsMargins(0, 0, 0, 0)
        v.setSpacing(6)
        self.who = QLabel("")
        named(self.who, "showdown.seat")
        self.who.setFont(_font(22, True))
        self.who.setStyleSheet("color: #111; background: #ffd23f; border-radius: 8px; padding: 4px 12px;")
        v.addWidget(self.who)
        h = QHBoxLayout()
        h.setSpacing(12)
        big = "QPushButton {{ color: white; background: {0}; border-radius: 12px; padding: 6px 10px; }}"
        # Four in a row within the 654 px a 1024-px screen leaves beside the side column (issue 21, 10).
        self.show_button = button("Show hand", "showdown.show", height=64, px=22, style=big.format("#1f6e3a"))
        self.pick_button = button("Key cards", "showdown.pick", height=64, px=22, style=big.format("#24527a"))
        self.muck_button = button("Muck", "showdown.muck", height=64, px=22, style=big.format("#8e2323"))
        self.kill_button = button("Kill hand", "showdown.kill", height=64, px=22, style=big.format("#4a1f5c"))
        for b in self.buttons:
            b.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
            h.addWidget(b)
        v.addLayout(h)
        self.refusal = RefusalLabel("showdown")
        v.addWidget(self.refusal)
        self.seat: int | None = None
        self.show_button.clicked.connect(lambda: self.seat is not None and self.show_known.emit(self.seat))
        self.pick_button.clicked.connect(lambda: self.seat is not None and self.pick.emit(self.seat))
        self.muck_button.clicked.connect(lambda: self.seat is not None and self.muck.emit(self.seat))
        self.kill_button.clicked.connect(lambda: self.seat is not None and self.kill.emit(self.seat))

    @property
    def buttons(self) -> tuple[QPushButton, ...]:
        return self.show_button, self.pick_button, self.muck_button, self.kill_button

    def set_snapshot(self, snap: TableSnapshot) -> bool:
        """Show the panel for the seat to show; False (hidden) outside a showdown."""
        active = snap.phase == "showdown" and snap.to_act is not None
        self.seat = snap.to_act if active else None
        if active:
            self.who.setText(f"{snap.acting_name} to show")
        self.setVisible(active)
        return active


# --------------------------------------------------------------------------- manual cards


class ManualCardPanel(QGroupBox):
    """A card keyed by hand: seat and up/down preset from the engine's next card due; card on the picker.

    A card for another seat than the one due is questioned before it is sent
    (``manual.confirm-seat`` gives it to the chosen seat anyway, ``manual.cancel`` drops it).
    When the engine's next card due is the common card (RRoP stud 15) the panel keys that:
    ``manual.seat`` says "Common card" and the card picked goes to the centre (``common_entered``).
    """

    entered = Signal(int, str, bool)
    common_entered = Signal(str)
    wants_picker = Signal(str)  # the picker's title

    def __init__(self, parent: QWidget | None = None) -> None:
        from dealer_console.widgets import _font

        super().__init__("Manual card", parent)
        named(self, "manual")
        g = QGridLayout(self)
        g.setSpacing(6)
        self.seat_label = QLabel("Seat")
        self.seat_label.setFont(_font(15, True))
        self.prev = button("<", "manual.seat.previous")
        self.next = button(">", "manual.seat.next")
        self.seat_text = QLabel("-")
        named(self.seat_text, "manual.seat")
        self.seat_text.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.seat_text.setFont(_font(20, True))
        self.up = button("Up", "manual.up")
        self.down = button("Down", "manual.down")
        group = QButtonGroup(self)
        for b in (self.up, self.down):
            b.setCheckable(True)
            group.addButton(b)
        self.up.setChecked(True)
        self.pick = button("Pick card", "manual.pick", style="QPushButton { background: #24527a; }")
        self.question = QLabel("")
        named(self.question, "manual.question")
        self.question.setWordWrap(True)
        self.question.setStyleSheet("color: #111; background: #ffb35c; border-radius: 8px; padding: 6px;")
        self.confirm = button("Yes, this seat", "manual.confirm-seat")
        self.cancel = button("No", "manual.cancel")
        self.refusal = RefusalLabel("manual")
        g.addWidget(self.prev, 0, 0)
        g.addWidget(self.seat_text, 0, 1)
        g.addWidget(self.next, 0, 2)
        g.addWidget(self.up, 1, 0, 1, 1)
        g.addWidget(self.down, 1, 1, 1, 2)
        g.addWidget(self.pick, 2, 0, 1, 3)
        g.addWidget(self.question, 3, 0, 1, 3)
        g.addWidget(self.confirm, 4, 0, 1, 2)
        g.addWidget(self.cancel, 4, 2)
        g.addWidget(self.refusal, 5, 0, 1, 3)
        self._question(False)
        self.seats: list[int] = []
        self.seat: int | None = None
        self.due_seat: int | None = None
        self.common_due = False  # the next card due is the common card (RRoP stud 15)
        self._pending: tuple[int, str, bool] | None = None
        self.prev.clicked.connect(lambda: self._step(-1))
        self.next.clicked.connect(lambda: self._step(1))
        self.pick.clicked.connect(self._open_picker)
        self.confirm.clicked.connect(self._confirm)
        self.cancel.clicked.connect(self._cancel)

    def _question(self, on: bool) -> None:
        for w in (self.question, self.confirm, self.cancel):
            w.setVisible(on)

    def set_snapshot(self, snap: TableSnapshot, next_deal: list[dict[str, object]]) -> None:
        self.seats = [s.seat for s in snap.seats if s.in_hand]
        self.common_due = bool(next_deal) and next_deal[0].get("kind") == "common"
        for b in (self.prev, self.next, self.down):
            b.setEnabled(not self.common_due)
        if self.common_due:
            self.up.setChecked(True)
            self.seat_text.setText("Common card")
            return
        due = next((d for d in next_deal if d.get("kind") == "card"), None)
        due_seat = due.get("seat") if due else None
        new_due = due_seat if isinstance(due_seat, int) else None
        if new_due != self.due_seat:  # the next card due moved on: preset seat and up/down to it
            self.due_seat = new_due
            if new_due is not None:
                self.seat = new_due
                (self.up if bool(due and due.get("face_up")) else self.down).setChecked(True)
        if self.seat not in self.seats:
            self.seat = self.due_seat if self.due_seat in self.seats else (self.seats[0] if self.seats else None)
        self.seat_text.setText(f"Seat {self.seat}" if self.seat is not None else "-")

    def _step(self, d: int) -> None:
        if not self.seats:
            return
        i = self.seats.index(self.seat) if self.seat in self.seats else 0
        self.seat = self.seats[(i + d) % len(self.seats)]
        self.seat_text.setText(f"Seat {self.seat}")

    def _open_picker(self) -> None:
        if self.common_due:
            self.wants_picker.emit("The common card, face up in the centre: it plays in every hand")
            return
        if self.seat is None:
            self.refusal.show_reason("no seat has cards in this hand")
            return
        self.wants_picker.emit(f"Card for seat {self.seat}, {'up' if self.up.isChecked() else 'down'}")

    def take(self, code: str) -> None:
        """The card picked for the chosen seat: sent, or questioned if that seat is not the one due."""
        if self.common_due:
            self.common_entered.emit(code)
            return
        if self.seat is None:
            return
        entry = (self.seat, code, self.up.isChecked())
        if self.due_seat is not None and self.seat != self.due_seat:
            self._pending = entry
            self.question.setText(f"The next card is due to seat {self.due_seat}, not seat {self.seat}. "
                                  f"Give the {code} to seat {self.seat}?")
            self._question(True)
            return
        self.entered.emit(*entry)

    def _confirm(self) -> None:
        if self._pending is not None:
            self.entered.emit(*self._pending)
        self._pending = None
        self._question(False)

    def _cancel(self) -> None:
        self._pending = None
        self._question(False)


# --------------------------------------------------------------------------- seating


class OnScreenKeyboard(QWidget):
    """Letters for a player's name (``keyboard.A`` ..., ``keyboard.space``, ``keyboard.backspace``)."""

    typed = Signal(str)  # a character, or "\b" for backspace

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        g = QGridLayout(self)
        g.setSpacing(4)
        rows = ("QWERTYUIOP", "ASDFGHJKL", "ZXCVBNM")
        for r, letters in enumerate(rows):
            for c, ch in enumerate(letters):
                b = button(ch, f"keyboard.{ch}", px=18)
                b.setMinimumWidth(30)
                b.clicked.connect(lambda _=False, ch=ch: self.typed.emit(ch))
                g.addWidget(b, r, c)
        space = button("Space", "keyboard.space")
        space.clicked.connect(lambda: self.typed.emit(" "))
        back = button("\u232b", "keyboard.backspace")
        back.clicked.connect(lambda: self.typed.emit("\b"))
        g.addWidget(space, 3, 0, 1, 7)
        g.addWidget(back, 3, 7, 1, 3)


class NumberPad(QWidget):
    """Digits for chip amounts (``numpad.0`` ... ``numpad.9``, ``numpad.clear``)."""

    typed = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        g = QGridLayout(self)
        g.setSpacing(4)
        for i, d in enumerate("789456123"):
            b = button(d, f"numpad.{d}", px=20)
            b.clicked.connect(lambda _=False, d=d: self.typed.emit(d))
            g.addWidget(b, i // 3, i % 3)
        zero = button("0", "numpad.0", px=20)
        zero.clicked.connect(lambda: self.typed.emit("0"))
        clear = button("Clear", "numpad.clear")
        clear.clicked.connect(lambda: self.typed.emit("\b"))
        g.addWidget(zero, 3, 0, 1, 2)
        g.addWidget(clear, 3, 2)
        for c in range(3):
            g.setColumnStretch(c, 1)  # three even columns, as on a phone's pad


class SeatingPage(QWidget):
    """Seats and chips between hands (002 3.1): sit down with a buy-in, add chips, sit out/in, leave.

    Emits ``table`` commands as ``(op, seat, fields)``; the engine checks the buy-in against the
    table's minimum and the one short buy-in, and a refusal shows beside these controls.
    """

    command = Signal(str, int, dict)

    def __init__(self, parent: QWidget | None = None) -> None:
        from dealer_console.widgets import _font

        super().__init__(parent)
        named(self, "seating")
        h = QHBoxLayout(self)
        h.setContentsMargins(0, 0, 0, 0)
        self.rows_box = QVBoxLayout()
        self.rows_box.setSpacing(6)
        left = QWidget()
        left.setLayout(self.rows_box)
        h.addWidget(left, 3)
        form = QWidget()
        fv = QVBoxLayout(form)
        fv.setContentsMargins(8, 0, 0, 0)
        self.form_title = QLabel("Choose a seat")
        named(self.form_title, "seating.title")
        self.form_title.setFont(_font(20, True))
        self.form_title.setWordWrap(True)
        fv.addWidget(self.form_title)
        self.name = QLabel("")
        named(self.name, "seating.name")
        self.amount = QLabel("")
        named(self.amount, "seating.amount")
        for lbl in (self.name, self.amount):
            lbl.setMinimumHeight(ROW_PX)
            lbl.setFont(_font(22, True))
            lbl.setStyleSheet("background: #1b2220; border: 1px solid #3c4a45; border-radius: 6px; padding: 4px 8px;")
            fv.addWidget(lbl)
        pads = QHBoxLayout()
        self.keyboard = OnScreenKeyboard()
        self.keyboard.typed.connect(self._type_name)
        pads.addWidget(self.keyboard, 3)
        self.numpad = NumberPad()
        self.numpad.typed.connect(self._type_amount)
        pads.addWidget(self.numpad, 1)
        fv.addLayout(pads)
        row = QHBoxLayout()
        self.confirm = button("Confirm", "seating.confirm", style="QPushButton { background: #2b8a4a; }")
        self.cancel = button("Cancel", "seating.cancel")
        row.addWidget(self.confirm)
        row.addWidget(self.cancel)
        fv.addLayout(row)
        self.refusal = RefusalLabel("seating")
        fv.addWidget(self.refusal)
        fv.addStretch(1)
        h.addWidget(form, 4)
        self.confirm.clicked.connect(self._confirm)
        self.cancel.clicked.connect(lambda: self._begin(None, None))
        self.rows: dict[int, tuple[QLabel, dict[str, QPushButton]]] = {}
        self.mode: str | None = None
        self.seat: int | None = None
        self.snapshot = TableSnapshot()
        self._begin(None, None)

    def _begin(self, mode: str | None, seat: int | None) -> None:
        self.mode, self.seat = mode, seat
        self.name.setText("")
        self.amount.setText("")
        self.name.setVisible(mode == "seat")
        self.keyboard.setVisible(mode == "seat")
        self.amount.setVisible(mode in ("seat", "add_chips"))
        self.numpad.setVisible(mode in ("seat", "add_chips"))
        self.cancel.setVisible(mode is not None)
        self.form_title.setText({"seat": f"Seat {seat}: the player's name and buy-in",
                                 "add_chips": f"Seat {seat}: chips to add",
                                 "move": f"Seat {seat} changes seats: tap Move here at an open seat (the stack "
                                         "goes along)"}.get(mode or "", "Choose a seat"))
        self.confirm.setVisible(mode in ("seat", "add_chips"))
        if self.rows:
            self.set_snapshot(self.snapshot)  # Sit down <-> Move here at the open seats

    def _type_name(self, ch: str) -> None:
        t = self.name.text()
        self.name.setText(t[:-1] if ch == "\b" else (t + ch)[:24])

    def _type_amount(self, ch: str) -> None:
        t = self.amount.text()
        self.amount.setText("" if ch == "\b" else (t + ch)[:7])

    def _confirm(self) -> None:
        seat, mode = self.seat, self.mode
        if seat is None or mode is None:
            return
        amount = int(self.amount.text()) if self.amount.text().isdigit() else 0
        if mode == "seat":
            name = self.name.text().strip().title()
            if not name:
                self.refusal.show_reason("type the player's name")
                return
            self.command.emit("seat", seat, {"name": name, "amount": amount})
        else:
            self.command.emit("add_chips", seat, {"amount": amount})
        self._begin(None, None)

    def set_snapshot(self, snap: TableSnapshot) -> None:
        self.snapshot = snap
        between = snap.phase in ("idle", "complete")
        for n in range(1, snap.seat_count + 1):
            if n not in self.rows:
                lbl = QLabel("")
                lbl.setMinimumHeight(ROW_PX)
                from dealer_console.widgets import _font

                lbl.setFont(_font(16, True))
                # the name may be cut short on a 1024-px screen with the form open, never the buttons
                lbl.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
                lbl.setMinimumWidth(90)
                row = QHBoxLayout()
                row.addWidget(lbl, 1)
                buttons: dict[str, QPushButton] = {}
                for op, text in (("sit-down", "Sit down"), ("move-here", "Move here"), ("add-chips", "+ Chips"),
                                 ("move", "Move"), ("sit-out", "Sit out"), ("sit-in", "Sit in"), ("leave", "Leave")):
                    b = button(text, f"seat.{n}.{op}", px=13)
                    b.setMinimumWidth(56)
                    b.clicked.connect(lambda _=False, n=n, op=op: self._tap(n, op))
                    row.addWidget(b)
                    buttons[op] = b
                self.rows_box.addLayout(row)
                self.rows[n] = (lbl, buttons)
            lbl, buttons = self.rows[n]
            s = snap.seat(n)
            taken = s is not None and bool(s.name)
            out = s is not None and s.status == "sitting_out"
            # the seat number, the name and the stack first: at 1024 px the buttons leave ~140 px
            lbl.setText(f"{n}  {s.name}  {s.stack:,}" + ("  (out)" if out else "")
                        if s is not None and taken else f"{n}  open")
            lbl.setToolTip(f"Seat {n}: {s.name}, {s.stack:,} in chips" + (", sitting out" if out else "")
                           if s is not None and taken else f"Seat {n} is open")
            moving = self.mode == "move"
            buttons["sit-down"].setVisible(not taken and not moving)
            buttons["move-here"].setVisible(not taken and moving)
            buttons["add-chips"].setVisible(taken)
            buttons["move"].setVisible(taken)
            buttons["sit-out"].setVisible(taken and not out)
            buttons["sit-in"].setVisible(taken and out)
            buttons["leave"].setVisible(taken)
            for op, b in buttons.items():
                # A seat change is offered during a hand too, so that the engine says why it must wait
                # (RRoP 3.1: seats change between hands only); the rest wait for the hand's end.
                b.setEnabled(between or op in ("move", "move-here"))
        if not hasattr(self, "_stretched"):
            self.rows_box.addStretch(1)
            self._stretched = True

    def _tap(self, seat: int, op: str) -> None:
        self.refusal.show_reason(None)
        if op == "sit-down":
            self._begin("seat", seat)
        elif op == "add-chips":
            self._begin("add_chips", seat)
        elif op == "move":
            self._begin("move", seat)
        elif op == "move-here":
            source = self.seat
            self._begin(None, None)
            if source is not None:
                # RRoP 3.1: the engine moves the player with the stack, between hands only.
                self.command.emit("move", source, {"to": seat})
        else:
            self.command.emit(op.replace("-", "_"), seat, {})
