"""The dealer's undo (issue 21, 4) and the game and stakes for the next hand (issue 21, 3).

``CorrectionPanel`` says what an undo will change before it changes it: ``correction.undo``
opens it on the dealer's last entry ("Undo: seat 3 Bob raise to 10 (third street)"),
``correction.older`` / ``correction.newer`` step to another entry of the hand, which needs
the floor's PIN (``pin.0`` ... ``pin.9`` on its own pad, shown as dots), ``correction.confirm``
sends it.  The entries, their words and what the undo takes again after them all come from
the engine (``dealer_inputs`` on public/state); the panel decides nothing.

``GamePage`` sets the game and stakes from the next hand: ``game.variant.stud`` /
``.razz`` / ``.stud8``, the amounts ``game.ante``, ``game.bring-in``, ``game.small-bet``,
``game.big-bet`` (tap one, type it on ``game-pad.N``), ``game.apply``.  The engine checks
that the game can be played and plays it from the next hand (``next_game`` meanwhile).
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QButtonGroup, QGridLayout, QGroupBox, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from dealer_console.controls import ROW_PX, RefusalLabel, button, named

VARIANT_BUTTONS = (("stud", "F7S", "Stud"), ("razz", "FR", "Razz"), ("stud8", "F7S/8", "Stud-8"))
AMOUNTS = (("ante", "ante", "Ante"), ("bring-in", "bring_in", "Bring-in"), ("small-bet", "small_bet", "Small bet"),
           ("big-bet", "big_bet", "Big bet"))


def _pad(prefix: str, typed: Any) -> QWidget:
    """Digits ``PREFIX.0`` ... ``PREFIX.9`` and ``PREFIX.clear``, each tap emitted as ``typed(ch)``."""
    pad = QWidget()
    g = QGridLayout(pad)
    g.setContentsMargins(0, 0, 0, 0)
    g.setSpacing(4)
    for i, d in enumerate("7894561230"):
        b = button(d, f"{prefix}.{d}", px=18)
        b.clicked.connect(lambda _=False, d=d: typed(d))
        g.addWidget(b, i // 3, i % 3)
    clear = button("Clear", f"{prefix}.clear")
    clear.clicked.connect(lambda: typed("\b"))
    g.addWidget(clear, 3, 1, 1, 2)
    return pad


class CorrectionPanel(QGroupBox):
    """Undo one of the hand's entries, after saying what it changes (see the module docstring)."""

    undo = Signal(int, int, str)  # hand, the entry's number, the floor PIN typed ("" for none)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Correction", parent)
        named(self, "correction")
        v = QVBoxLayout(self)
        self.undo_button = button("Undo last entry", "correction.undo")
        v.addWidget(self.undo_button)
        self.confirm_box = QWidget()
        cv = QVBoxLayout(self.confirm_box)
        cv.setContentsMargins(0, 0, 0, 0)
        self.text = QLabel("")
        named(self.text, "correction.text")
        self.text.setWordWrap(True)
        self.text.setMinimumHeight(ROW_PX)
        self.text.setStyleSheet("color: #ffe9a8; font-size: 16px; font-weight: bold;")
        cv.addWidget(self.text)
        steps = QHBoxLayout()
        self.older = button("Older", "correction.older")
        self.newer = button("Newer", "correction.newer")
        steps.addWidget(self.older)
        steps.addWidget(self.newer)
        cv.addLayout(steps)
        self.pin_label = QLabel("")
        named(self.pin_label, "correction.pin")
        self.pin_label.setMinimumHeight(ROW_PX)
        cv.addWidget(self.pin_label)
        self.pin_pad = _pad("pin", self._type_pin)
        cv.addWidget(self.pin_pad)
        row = QHBoxLayout()
        self.confirm = button("Undo it", "correction.confirm", style="QPushButton { background: #8a5a00; }")
        self.cancel = button("Cancel", "correction.cancel")
        row.addWidget(self.confirm)
        row.addWidget(self.cancel)
        cv.addLayout(row)
        v.addWidget(self.confirm_box)
        self.refusal = RefusalLabel("correction")
        v.addWidget(self.refusal)
        self.entries: list[dict[str, Any]] = []
        self.chosen: tuple[int, int] | None = None  # (hand, entry) shown for confirmation
        self.pin = ""
        self.undo_button.clicked.connect(self._open)
        self.older.clicked.connect(lambda: self._step(-1))
        self.newer.clicked.connect(lambda: self._step(1))
        self.confirm.clicked.connect(self._confirm)
        self.cancel.clicked.connect(self._close)
        self._close()

    def set_entries(self, entries: object) -> None:
        """The engine's ``dealer_inputs``: those still standing may be undone."""
        rows = entries if isinstance(entries, list) else []
        self.entries = [e for e in rows if isinstance(e, dict) and not e.get("undone") and not e.get("dropped")]
        self.undo_button.setEnabled(bool(self.entries))
        if self.chosen is not None and self._index() is None:
            self._close()  # the entry is gone (the hand ended, or it was undone)
        elif self.chosen is not None:
            self._show()

    def _index(self) -> int | None:
        for i, e in enumerate(self.entries):
            if (e.get("hand"), e.get("input")) == self.chosen:
                return i
        return None

    def _open(self) -> None:
        self.refusal.show_reason(None)
        if not self.entries:
            return
        last = [e for e in self.entries if e.get("last")]
        pick = last[0] if last else self.entries[-1]
        self.chosen = (int(pick["hand"]), int(pick["input"]))
        self.pin = ""
        self._show()

    def _step(self, d: int) -> None:
        i = self._index()
        if i is None:
            return
        i = max(0, min(len(self.entries) - 1, i + d))
        self.chosen = (int(self.entries[i]["hand"]), int(self.entries[i]["input"]))
        self._show()

    def _show(self) -> None:
        i = self._index()
        if i is None:
            return
        e = self.entries[i]
        words = f"Undo: {e.get('text', '')}"
        if e.get("after"):
            words += f". Taken again after it: {e['after']}"
        needs_pin = not e.get("last")
        if needs_pin:
            words += ". Not the last entry: the floor's PIN is needed"
        self.text.setText(words)
        self.pin_label.setText(f"Floor PIN: {'•' * len(self.pin)}" if needs_pin else "")
        self.pin_label.setVisible(needs_pin)
        self.pin_pad.setVisible(needs_pin)
        self.older.setEnabled(i > 0)
        self.newer.setEnabled(i < len(self.entries) - 1)
        self.confirm_box.setVisible(True)
        self.undo_button.setVisible(False)

    def _type_pin(self, ch: str) -> None:
        self.pin = "" if ch == "\b" else (self.pin + ch)[:12]
        self._show()

    def _confirm(self) -> None:
        i = self._index()
        if i is None:
            self._close()
            return
        e = self.entries[i]
        pin = "" if e.get("last") else self.pin
        self._close()
        self.undo.emit(int(e["hand"]), int(e["input"]), pin)

    def _close(self) -> None:
        self.chosen = None
        self.pin = ""
        self.confirm_box.setVisible(False)
        self.undo_button.setVisible(True)


class GamePage(QWidget):
    """The game and stakes from the next hand (see the module docstring)."""

    change = Signal(dict)  # the game's fields, as the ``table`` command's ``game`` carries them

    def __init__(self, parent: QWidget | None = None) -> None:
        from dealer_console.widgets import _font

        super().__init__(parent)
        named(self, "game")
        v = QVBoxLayout(self)
        self.current = QLabel("")
        named(self.current, "game.current")
        self.current.setFont(_font(18, True))
        self.current.setWordWrap(True)
        v.addWidget(self.current)
        variants = QHBoxLayout()
        self.variant_group = QButtonGroup(self)
        self.variant_buttons: dict[str, Any] = {}
        for name, code, label in VARIANT_BUTTONS:
            b = button(label, f"game.variant.{name}", px=18)
            b.setCheckable(True)
            self.variant_group.addButton(b)
            b.clicked.connect(lambda _=False, code=code: self._choose_variant(code))
            variants.addWidget(b)
            self.variant_buttons[code] = b
        v.addLayout(variants)
        body = QHBoxLayout()
        fields = QVBoxLayout()
        self.amount_buttons: dict[str, Any] = {}
        self.amount_group = QButtonGroup(self)
        for name, key, _label in AMOUNTS:
            b = button("", f"game.{name}", px=18)
            b.setCheckable(True)
            self.amount_group.addButton(b)
            b.clicked.connect(lambda _=False, key=key: self._choose_field(key))
            fields.addWidget(b)
            self.amount_buttons[key] = b
        body.addLayout(fields, 2)
        body.addWidget(_pad("game-pad", self._type), 1)
        v.addLayout(body)
        row = QHBoxLayout()
        self.apply = button("Play this from the next hand", "game.apply", style="QPushButton { background: #2b8a4a; }")
        self.reset = button("As now", "game.reset")
        row.addWidget(self.apply)
        row.addWidget(self.reset)
        v.addLayout(row)
        self.refusal = RefusalLabel("game")
        v.addWidget(self.refusal)
        v.addStretch(1)
        self.values: dict[str, Any] = {}
        self.field: str | None = None
        self.fresh = True  # the next digit replaces the field's value
        self.edited = False
        self.apply.clicked.connect(self._apply)
        self.reset.clicked.connect(lambda: self._load(self.shown))
        self.shown: dict[str, Any] = {}

    def set_state(self, game: object, next_game: object, hand_live: bool) -> None:
        """The game on the table now and the one waiting for the next hand (public/state)."""
        def line(g: dict[str, Any]) -> str:
            return (f"{g.get('name')} {g.get('small_bet')}/{g.get('big_bet')}, ante {g.get('ante')}, "
                    f"bring-in {g.get('bring_in')}")
        now = game if isinstance(game, dict) else {}
        nxt = next_game if isinstance(next_game, dict) else None
        text = f"{'This hand' if hand_live else 'Now'}: {line(now)}" if now else "No game yet"
        if nxt:
            text += f"\nNext hand: {line(nxt)}"
        self.current.setText(text)
        target = nxt or now
        if target and not self.edited:
            self._load(target)

    def _load(self, g: dict[str, Any]) -> None:
        self.shown = dict(g)
        self.values = {k: g.get(k) for _, k, _ in AMOUNTS}
        self.values["variant"] = g.get("variant")
        self.edited = False
        self.field = None
        self._refresh()

    def _refresh(self) -> None:
        for code, b in self.variant_buttons.items():
            b.setChecked(code == self.values.get("variant"))
        for _name, key, label in AMOUNTS:
            b = self.amount_buttons[key]
            b.setText(f"{label}: {self.values.get(key, '')}")
            b.setChecked(key == self.field)

    def _choose_variant(self, code: str) -> None:
        self.values["variant"] = code
        self.edited = True
        self._refresh()

    def _choose_field(self, key: str) -> None:
        self.field = key
        self.fresh = True
        self._refresh()

    def _type(self, ch: str) -> None:
        if self.field is None:
            return
        old = "" if self.fresh else str(self.values.get(self.field) or "")
        new = "" if ch == "\b" else (old + ch)[:7]
        self.values[self.field] = int(new) if new else 0
        self.fresh = False
        self.edited = True
        self._refresh()

    def _apply(self) -> None:
        self.refusal.show_reason(None)
        game = {k: v for k, v in self.values.items() if v is not None}
        self.edited = False
        self.change.emit(game)
