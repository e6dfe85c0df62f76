"""The widgets both applications are built from.  They draw the models; they compute no poker.

``TableView`` draws the table as it is: an oval of felt, the dealer's place at
the bottom, each seat around it (name, stack, cards in deal order with down
cards as backs, a bet in front of it toward the pot), the pot, the street and
the bet size in the middle, and the seat to act outlined.  Seats involved in
an open prompt are outlined in orange.  Cards are ``QLabel`` pixmaps whose
tooltip names the card (up cards) or says "down card", so what is visible is
also inspectable in tests.  The rest (action bar, prompt panel, health strip,
reports, manual card) are small widgets that emit what the dealer chose.
"""

from __future__ import annotations

import html
import math

from PySide6.QtCore import QPointF, QRectF, QSize, Qt, QTimer, Signal
from PySide6.QtGui import (
    QBrush,
    QColor,
    QFont,
    QKeySequence,
    QPainter,
    QPen,
    QPixmap,
    QRadialGradient,
    QShortcut,
)
from PySide6.QtWidgets import (
    QComboBox,
    QFrame,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from dealer_console.cards import CardImages, card_name
from dealer_console.controls import ROW_PX, TapGuard
from dealer_console.health import DeviceHealth, age_text
from dealer_console.snapshot import OptionView, PromptView, SeatView, TableSnapshot, award_text, option_names
from engine.citations import cite

FELT = QColor("#1d6b43")
FELT_EDGE = QColor("#5a3a1c")
ACT = QColor("#ffd23f")
PROMPT = QColor("#ff8c1a")
TEXT = "#f4f4f0"

#: where the eight seats sit, as fractions of the oval (seat 1 at the dealer's left, bottom)
SEAT_SPOTS_8 = ((0.29, 0.85), (0.1, 0.59), (0.13, 0.27), (0.37, 0.1), (0.63, 0.1), (0.87, 0.27), (0.9, 0.59),
                (0.71, 0.85))

ACTION_STYLE = {
    "fold": ("#8e2323", "#b33a3a"),
    "check": ("#1f6e3a", "#2b8a4a"),
    "call": ("#1f6e3a", "#2b8a4a"),
    "bring_in": ("#24527a", "#2f6aa0"),
    "complete": ("#8a5a00", "#b07400"),
    "bet": ("#8a5a00", "#b07400"),
    "raise": ("#8a5a00", "#b07400"),
}


def _font(px: int, bold: bool = False) -> QFont:
    f = QFont("DejaVu Sans")
    f.setPixelSize(px)
    f.setBold(bold)
    return f


def restyle(widget: QWidget, sheet: str) -> None:
    """Set a style sheet only when it changes: each new sheet re-polishes the widget, which is most of
    what a console spends per published state."""
    if widget.styleSheet() != sheet:
        widget.setStyleSheet(sheet)


def dimmed(pm: QPixmap, opacity: float = 0.35) -> QPixmap:
    out = QPixmap(pm.size())
    out.fill(Qt.GlobalColor.transparent)
    p = QPainter(out)
    p.setOpacity(opacity)
    p.drawPixmap(0, 0, pm)
    p.end()
    return out


# --------------------------------------------------------------------------- the table


#: a seat's last action in a narrow header (the tooltip keeps the engine's words)
SHORT_DID = {"brought in": "bring", "completed to": "compl.", "raised to": "raise", "called": "call",
             "checked": "check", "folded": "fold"}


def seat_word(seat: SeatView, won: int = 0) -> str:
    """The word in a seat's header: what it won, where it stands (a losing hand that was shown is
    SHOWN, not MUCKED: issue 21, 11), else what it did this betting round (the engine's words)."""
    if won:
        return f"WINS {won:,}"
    if seat.status == "mucked" and seat.shown:
        return "SHOWN"
    word = {"folded": "FOLDED", "dead": "DEAD", "mucked": "MUCKED", "all_in": "ALL IN", "sitting_out": "SITTING OUT"}.get(
        seat.status, "")
    return word or seat.last_action


class SeatWidget(QFrame):
    """One seat: name and stack over the row of cards as a dealer lays them."""

    def __init__(self, images: CardImages, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.images = images
        self.setObjectName("seat")
        self.name = QLabel(self)
        self.name.setObjectName("seatName")
        self.stack = QLabel(self)
        self.stack.setObjectName("seatStack")
        self.status = QLabel(self)
        self.status.setObjectName("seatStatus")
        self.cards: list[QLabel] = []
        self.shown_cards = 0
        self.view: SeatView | None = None
        self.card_h = 60
        self.acting = False
        self.flagged = False
        self.empty = True
        self.won = 0
        self._shown: tuple[object, ...] | None = None

    def show_seat(self, seat: SeatView | None, number: int, acting: bool, flagged: bool, card_h: int,
                  won: int = 0) -> None:
        # Every state redraws the table; a seat whose view, place and size did not change is left
        # as drawn (restyling eight seats on every state held the console's thread 5-10 ms).
        shown = (seat, number, acting, flagged, card_h, won, self.width(), self.height())
        if shown == self._shown:
            return
        self._shown = shown
        self.view, self.card_h, self.acting, self.flagged, self.won = seat, card_h, acting, flagged, won
        name_px = max(12, round(card_h * 0.3))
        self.name.setFont(_font(name_px, True))
        self.stack.setFont(_font(name_px, True))
        self.status.setFont(_font(max(10, round(name_px * 0.8)), True))
        self.status.setAccessibleName(f"seat.{number}.status")
        self.empty = seat is None or (not seat.name and not seat.in_hand)
        if self.empty or seat is None:
            self.name.setText(f"{number}  open")
            self.stack.setText("")
            self.status.setText("")
            self.status.setToolTip("")
            cards: list[tuple[str | None, bool]] = []
        else:
            self.name.setText(f"{seat.seat}  {seat.name}")
            self.stack.setText(f"{seat.stack:,}")
            self.status.setText(seat_word(seat, won))
            self.status.setToolTip(self.status.text())
            cards = [(c.code, c.up) for c in seat.cards]
        while len(self.cards) < len(cards):
            lbl = QLabel(self)
            lbl.setObjectName("card")
            self.cards.append(lbl)
        for lbl in self.cards[len(cards):]:
            lbl.hide()
            lbl.clear()
            lbl.setToolTip("")
        self.shown_cards = len(cards)
        out = seat is not None and seat.out and not seat.shown  # a shown hand stays readable
        for lbl, (code, up) in zip(self.cards, cards, strict=False):
            pm = self.images.pixmap(code, card_h)
            lbl.setPixmap(dimmed(pm) if out else pm)
            lbl.setToolTip(card_name(code) + (" (shown)" if not up else "") if code else "down card")
            lbl.setAccessibleName(lbl.toolTip())
            lbl.show()
        colour = "#5f8a70" if self.empty else "#9aa39c" if out else TEXT
        restyle(self.name, f"color: {'#111' if acting else colour}; background: transparent;")
        restyle(self.stack, f"color: {'#111' if acting else '#ffe9a8' if not out else colour};"
                                 " background: transparent;")
        word = self.status.text()
        tone = ("#111" if acting else "#7ee2a1" if won else "#ffe9a8" if word == "SHOWN"
                else "#bfe3ff" if seat is not None and word == seat.last_action else "#ffb4a8")
        restyle(self.status, f"color: {tone}; background: transparent;")
        self._layout()
        self.update()

    def _layout(self) -> None:
        w, h = self.width(), self.height()
        card_w = round(self.card_h / 1.4)
        header = round(self.card_h * 0.46)
        self.name.setGeometry(10, 3, w - 20, header)
        self.stack.setGeometry(10, 3, w - 20, header)
        self.stack.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        visible = self.cards[: self.shown_cards]
        step = round(card_w * 0.6)
        x = 8
        y = header + 6
        for lbl in visible:
            lbl.setGeometry(x, y, card_w, self.card_h)
            lbl.raise_()
            x += step
        # In the header, after the name and before the stack, never over either.
        name_w = self.name.fontMetrics().horizontalAdvance(self.name.text())
        stack_w = self.stack.fontMetrics().horizontalAdvance(self.stack.text())
        sx = 10 + name_w + 10
        room = max(0, w - 10 - stack_w - 8 - sx)
        text = self.status.text()
        short = {"FOLDED": "FOLD", "MUCKED": "MUCK", "SITTING OUT": "OUT", "ALL IN": "ALL IN", "SHOWN": "SHOWN", "DEAD": "DEAD"}
        if self.status.fontMetrics().horizontalAdvance(text) > room and text in short:
            self.status.setText(short[text])  # a narrow seat gets the short word, not a clipped one
        elif self.status.fontMetrics().horizontalAdvance(text) > room - 8 and self.view is not None \
                and text == self.view.last_action:  # a narrow seat: "raised to 10" -> "raise 10"
            verb, _, amount = text.rpartition(" ") if text[-1:].isdigit() else (text, "", "")
            short_text = f"{SHORT_DID.get(verb, verb)} {amount}".strip()
            if self.status.fontMetrics().horizontalAdvance(short_text) > room:
                short_text = amount or SHORT_DID.get(verb, verb)  # the narrowest seat: the amount
            self.status.setText(short_text)
        font = self.status.font()
        while self.status.fontMetrics().horizontalAdvance(self.status.text()) > room and font.pixelSize() > 9:
            font.setPixelSize(font.pixelSize() - 1)  # still too wide: smaller type, never a clipped word
            self.status.setFont(font)
        if self.status.fontMetrics().horizontalAdvance(self.status.text()) > room:
            self.status.setText("")  # no room at all (a thumbnail table): the tooltip keeps the word
        self.status.setGeometry(sx, 3, room, header)
        self.status.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
        self.status.raise_()
        _ = h

    def resizeEvent(self, event: object) -> None:
        self._layout()

    def paintEvent(self, event: object) -> None:
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        r = QRectF(self.rect()).adjusted(2, 2, -2, -2)
        header = round(self.card_h * 0.46) + 3
        if self.empty:
            p.setPen(QPen(QColor(255, 255, 255, 30), 1, Qt.PenStyle.DashLine))
            p.setBrush(Qt.BrushStyle.NoBrush)
            p.drawRoundedRect(QRectF(r.left(), r.top(), r.width(), header + 6), 10, 10)
            p.end()
            return
        if self.acting:
            p.setPen(QPen(ACT, 4))
            p.setBrush(QColor(0, 0, 0, 120))
        elif self.won:
            p.setPen(QPen(QColor("#7ee2a1"), 4))
            p.setBrush(QColor(0, 0, 0, 120))
        elif self.flagged:
            p.setPen(QPen(PROMPT, 4))
            p.setBrush(QColor(0, 0, 0, 120))
        else:
            p.setPen(QPen(QColor(255, 255, 255, 40), 1))
            p.setBrush(QColor(0, 0, 0, 90))
        p.drawRoundedRect(r, 10, 10)
        if self.acting:  # a solid name bar: who acts is the first thing the eye finds
            p.setPen(Qt.PenStyle.NoPen)
            p.setBrush(ACT)
            p.drawRoundedRect(QRectF(r.left() + 2, r.top() + 2, r.width() - 4, header), 8, 8)
        p.end()


class TableView(QWidget):
    """The table as it is: felt, seats, bets, pot, street and bet size; who acts outlined."""

    def __init__(self, images: CardImages, *, monitor: bool = False, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.images = images
        self.monitor = monitor
        self.snapshot = TableSnapshot()
        self.flagged: set[int] = set()
        self.seats: dict[int, SeatWidget] = {}
        self.bets: dict[int, QLabel] = {}
        self.center = QLabel(self)
        self.center.setObjectName("center")
        self.center.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.center.setTextFormat(Qt.TextFormat.RichText)
        self.center.setStyleSheet(f"color: {TEXT}; background: transparent;")
        self.setMinimumSize(340, 220)  # the history page beside it fits 1024 px (issue 21, 10)
        self._felt: QPixmap | None = None
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)

    def show_snapshot(self, snap: TableSnapshot, flagged: set[int] | None = None) -> None:
        self.snapshot = snap
        self.flagged = set(flagged or ())
        self._relayout()

    # geometry ---------------------------------------------------------------
    def _oval(self) -> QRectF:
        return QRectF(self.rect()).adjusted(8, 8, -8, -8)

    def card_height(self) -> int:
        """Cards as large as the seats allow without two seats overlapping."""
        w, h = self.width(), self.height()
        return max(30, round(min(w * 0.066, h * 0.14)))

    def seat_position(self, number: int, count: int) -> QPointF:
        """Seat 1 at the dealer's left, clockwise round to the dealer's right; the dealer at the bottom.

        Eight seats (the usual stud table) use hand-placed spots that keep the
        seats apart on wide and square screens alike; other counts are spread
        evenly round the oval.
        """
        oval = self._oval()
        if count == 8:
            fx, fy = SEAT_SPOTS_8[number - 1]
        else:
            gap = 64.0
            angle = math.radians(90 + gap / 2 + (number - 1) * (360 - gap) / max(1, count - 1))
            fx, fy = 0.5 + 0.39 * math.cos(angle), 0.5 + 0.37 * math.sin(angle)
        size = self.seat_size()
        x = min(max(oval.left() + fx * oval.width(), oval.left() + size.width() / 2 + 4),
                oval.right() - size.width() / 2 - 4)
        y = min(max(oval.top() + fy * oval.height(), oval.top() + size.height() / 2 + 2),
                oval.bottom() - size.height() / 2 - 2)
        return QPointF(x, y)

    def seat_size(self) -> QSize:
        card_h = self.card_height()
        card_w = round(card_h / 1.4)
        return QSize(round(card_w * (1 + 0.6 * 6)) + 16, round(card_h * 1.62) + 10)

    def _relayout(self) -> None:
        snap = self.snapshot
        count = max(snap.seat_count, max((s.seat for s in snap.seats), default=0))
        card_h = self.card_height()
        numbers = list(range(1, count + 1))
        for n in list(self.seats):
            if n not in numbers:
                self.seats.pop(n).deleteLater()
                self.bets.pop(n).deleteLater()
        for n in numbers:
            if n not in self.seats:
                self.seats[n] = SeatWidget(self.images, self)
                bet = QLabel(self)
                bet.setObjectName("bet")
                bet.setAlignment(Qt.AlignmentFlag.AlignCenter)
                self.bets[n] = bet
            seat = snap.seat(n)
            w = self.seats[n]
            size = self.seat_size()
            pos = self.seat_position(n, count)
            w.setGeometry(round(pos.x() - size.width() / 2), round(pos.y() - size.height() / 2),
                          size.width(), size.height())
            won = sum(a.amount for a in snap.awards if a.seat == n) if snap.phase == "complete" else 0
            w.show_seat(seat, n, snap.to_act == n and snap.phase in ("betting", "showdown"), n in self.flagged,
                        card_h, won)
            w.show()
            bet = self.bets[n]
            if seat is not None and seat.bet > 0:
                c = self._oval().center()
                t = 0.52
                bx, by = c.x() + (pos.x() - c.x()) * t, c.y() + (pos.y() - c.y()) * t
                bet.setText(f"{seat.bet:,}")
                bet.setToolTip(f"seat {n} bet {seat.bet}")
                px = max(13, round(card_h * 0.3))
                bet.setFont(_font(px, True))
                bw, bh = px * 4, round(px * 1.7)
                bet.setGeometry(round(bx - bw / 2), round(by - bh / 2), bw, bh)
                restyle(bet, f"color: #111; background: #f1d36b; border: 2px solid #fff3c4;"
                                  f" border-radius: {bh // 2}px;")
                bet.show()
            else:
                bet.hide()
                bet.setText("")
        self._center_text(card_h)
        self.update()

    def _center_text(self, card_h: int) -> None:
        snap = self.snapshot
        big = round(card_h * (0.62 if self.monitor else 0.55))
        small = round(card_h * 0.3)
        lines = []
        if snap.phase == "complete" and snap.awards:
            # Each pot apart (main, side pots; high and low halves), who won it and with what.
            pots = sorted({a.pot for a in snap.awards})
            lines.append(f"<div style='font-size:{small}px; color:#cfe8d5'>POT AWARDED</div>")
            if len(snap.awards) == 1:
                lines.append(f"<div style='font-size:{big}px; font-weight:bold'>{snap.awards[0].amount:,}</div>")
            for pot in pots:
                for a in (x for x in snap.awards if x.pot == pot):
                    s = snap.seat(a.seat)
                    who = s.name if s and s.name else f"Seat {a.seat}"
                    name = "Main pot" if pot == 0 else f"Side pot {pot}" if len(pots) > 2 else "Side pot"
                    share = f" ({a.share})" if a.share in ("high", "low") and snap.variant == "F7S/8" else ""
                    hand = f" · {html.escape(a.hand)}" if a.hand else ""
                    lines.append(f"<div style='font-size:{small}px; font-weight:bold; color:#7ee2a1'>"
                                 f"{name}{share} {a.amount:,}: {html.escape(who)}{hand}</div>")
        else:
            lines.append(f"<div style='font-size:{small}px; color:#cfe8d5'>POT</div>")
            lines.append(f"<div style='font-size:{big}px; font-weight:bold'>{snap.pot:,}</div>")
        if snap.common:  # RRoP stud 15: one card face up in the centre plays in every hand
            lines.append(f"<div style='font-size:{small}px; font-weight:bold; color:#ffffff'>Common card: "
                         f"{html.escape(' '.join(snap.common))}</div>")
        if snap.street:
            bet = f" · bet {snap.bet_size}" if snap.bet_size else ""
            lines.append(f"<div style='font-size:{small}px; font-weight:bold'>{snap.street.capitalize()}{bet}</div>")
        elif snap.phase == "showdown":
            lines.append(f"<div style='font-size:{small}px; font-weight:bold'>Showdown</div>")
        if snap.to_act is not None and snap.phase == "betting":
            lines.append(f"<div style='font-size:{small}px; color:#ffd23f; font-weight:bold'>"
                         f"{snap.acting_name} to act</div>")
        elif snap.to_act is not None and snap.phase == "showdown":
            lines.append(f"<div style='font-size:{small}px; color:#ffd23f; font-weight:bold'>"
                         f"{snap.acting_name} to show</div>")
        self.center.setText("".join(lines))
        c = self._oval().center()
        w, h = round(self.width() * 0.36), round(card_h * 2.4)
        self.center.setGeometry(round(c.x() - w / 2), round(c.y() - h / 2 - card_h * 0.1), w, h)

    def resizeEvent(self, event: object) -> None:
        self._relayout()

    def paintEvent(self, event: object) -> None:
        # The felt is the same picture until the size changes: drawn once into a pixmap, then copied.
        if self._felt is None or self._felt.size() != self.size():
            self._felt = QPixmap(self.size())
            self._paint_felt(QPainter(self._felt))
        p = QPainter(self)
        p.drawPixmap(0, 0, self._felt)
        p.end()

    def _paint_felt(self, p: QPainter) -> None:
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        p.fillRect(self.rect(), QColor("#15191c"))
        oval = self._oval()
        p.setPen(QPen(FELT_EDGE, 16))
        grad = QRadialGradient(oval.center(), max(oval.width(), oval.height()) / 2)
        grad.setColorAt(0, QColor("#23804f"))
        grad.setColorAt(1, FELT)
        p.setBrush(QBrush(grad))
        inner = oval.adjusted(8, 8, -8, -8)
        p.drawRoundedRect(inner, inner.height() / 2, inner.height() / 2)
        # the dealer's place, at the bottom centre of the layout
        p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(QColor(0, 0, 0, 90))
        d = QRectF(0, 0, 120, 26)
        d.moveCenter(QPointF(inner.center().x(), inner.bottom() - 22))
        p.drawRoundedRect(d, 13, 13)
        p.setPen(QColor("#cfe8d5"))
        p.setFont(_font(14, True))
        p.drawText(d, Qt.AlignmentFlag.AlignCenter, "DEALER")
        p.end()


# --------------------------------------------------------------------------- actions


class ActionButton(QPushButton):
    """A large touch button with its keyboard key shown in the corner."""

    def __init__(self, option: OptionView, key: str, name: str, parent: QWidget | None = None) -> None:
        super().__init__(option.label, parent)
        self.option = option
        self.key = key
        self.setObjectName(f"action_{option.action}")
        self.setAccessibleName(name)
        self.setMinimumHeight(78)
        self.setMinimumWidth(150)
        self.setFont(_font(26, True))
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        base, hover = ACTION_STYLE.get(option.action, ("#444", "#555"))
        self.setStyleSheet(
            f"QPushButton {{ color: white; background: {base}; border: 2px solid {hover}; border-radius: 12px;"
            f" padding: 6px 18px; }} QPushButton:pressed {{ background: {hover}; }}"
            f" QPushButton:disabled {{ color: #888; background: #333; border-color: #444; }}"
        )
        self.hint = QLabel(key, self)
        self.hint.setFont(_font(14, True))
        self.hint.setStyleSheet("color: rgba(255,255,255,170); background: transparent;")
        self.setToolTip(f"{option.label}  (key {key})")

    def resizeEvent(self, event: object) -> None:
        self.hint.adjustSize()
        self.hint.move(self.width() - self.hint.width() - 10, 6)


class ActionBar(QWidget):
    """The options of the player to act, as big buttons with keys: letter (F, C, B, R) and digit (1..9)."""

    chosen = Signal(object)  # OptionView

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("actionBar")
        self.layout_ = QHBoxLayout(self)
        self.layout_.setContentsMargins(0, 0, 0, 0)
        self.layout_.setSpacing(12)
        self.buttons: list[ActionButton] = []
        self._shortcuts: list[QShortcut] = []
        self.idle = QLabel("", self)
        self.idle.setFont(_font(20))
        self.idle.setStyleSheet("color: #9aa39c;")
        self.idle.setMinimumHeight(78)
        self.layout_.addWidget(self.idle)
        self.setMinimumHeight(82)
        self.guard: TapGuard | None = None
        self._shown: tuple[OptionView, ...] | None = None
        self._held: tuple[tuple[OptionView, ...], str] | None = None
        self._hold_timer = QTimer(self)
        self._hold_timer.setInterval(30)
        self._hold_timer.timeout.connect(self._release_held)

    def _release_held(self) -> None:
        from PySide6.QtWidgets import QApplication

        if self._held is None:
            self._hold_timer.stop()
        elif QApplication.mouseButtons() == Qt.MouseButton.NoButton:
            self._hold_timer.stop()
            self.set_options(*self._held)

    def set_options(self, options: tuple[OptionView, ...], idle_text: str = "") -> None:
        """The options of the player to act.  While a finger is still down on the screen the new
        buttons are held back until it lifts, so they never appear under it (issue 21, 4)."""
        from PySide6.QtWidgets import QApplication

        if QApplication.mouseButtons() != Qt.MouseButton.NoButton and options != self._shown:
            self._held = (options, idle_text)
            self._hold_timer.start()
            return
        self._held = None
        if options == self._shown and idle_text == self.idle.text() and (options or self.buttons == []):
            return  # the same options (another state of the same turn): keep the buttons under the finger
        self._shown = options
        for b in self.buttons:
            self.layout_.removeWidget(b)
            b.deleteLater()
        for s in self._shortcuts:
            s.setEnabled(False)
            s.deleteLater()
        self.buttons, self._shortcuts = [], []
        self.idle.setVisible(not options)
        self.idle.setText(idle_text)
        names = option_names([(o.action, o.amount) for o in options])
        for i, o in enumerate(options):
            keys = [k for k in (o.shortcut, str(i + 1) if i < 9 else "") if k]
            b = ActionButton(o, " · ".join(keys), names[i], self)
            if self.guard is not None:
                self.guard.guard(b)
            b.clicked.connect(lambda _=False, o=o: self.chosen.emit(o))
            self.layout_.addWidget(b)
            self.buttons.append(b)
            for k in keys:
                sc = QShortcut(QKeySequence(k), self.window())
                sc.setContext(Qt.ShortcutContext.WindowShortcut)
                sc.activated.connect(b.click)
                self._shortcuts.append(sc)

    def setEnabled(self, enabled: bool) -> None:
        super().setEnabled(enabled)
        for s in self._shortcuts:
            s.setEnabled(enabled)


# --------------------------------------------------------------------------- prompts


class PromptCard(QFrame):
    """One open irregularity: the ruling in plain words, the options as buttons, the clause cited."""

    ruled = Signal(str, str)

    def __init__(self, prompt: PromptView, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.prompt = prompt
        self.setObjectName("promptCard")
        self.setStyleSheet("#promptCard { background: #3a2410; border: 3px solid #ff8c1a; border-radius: 12px; }")
        v = QVBoxLayout(self)
        v.setContentsMargins(14, 10, 14, 12)
        v.setSpacing(8)
        head = QLabel("IRREGULARITY" + (f" · seat {', '.join(map(str, prompt.seats))}" if prompt.seats else ""))
        head.setFont(_font(15, True))
        head.setStyleSheet("color: #ffb35c; background: transparent; border: none;")
        v.addWidget(head)
        text = QLabel(prompt.text)
        text.setObjectName("promptText")
        text.setAccessibleName("prompt.text")
        text.setWordWrap(True)
        text.setFont(_font(20, True))
        text.setStyleSheet("color: white; background: transparent; border: none;")
        v.addWidget(text)
        # The rule in words (engine/citations.py; an older engine's seed numbers are put in words here).
        words = cite(prompt.clause) if prompt.clause != prompt.rule else ""
        clause = QLabel(f"Rule: {words}" if words else "")
        clause.setVisible(bool(words))
        clause.setObjectName("promptClause")
        clause.setAccessibleName("prompt.clause")
        clause.setWordWrap(True)
        clause.setFont(_font(14))
        clause.setStyleSheet("color: #e8cfa8; background: transparent; border: none; font-style: italic;")
        v.addWidget(clause)
        self.buttons: list[QPushButton] = []
        for o in prompt.options:
            b = QPushButton(o.label)
            b.setObjectName(f"ruling_{o.id}")
            b.setAccessibleName(f"prompt.option.{o.id}")
            b.setMinimumHeight(56)
            b.setFont(_font(19, True))
            b.setStyleSheet("QPushButton { color: #111; background: #ffb35c; border-radius: 10px; padding: 4px 10px; }"
                            " QPushButton:disabled { background: #6b5235; color: #bbb; }")
            b.clicked.connect(lambda _=False, oid=o.id: self._choose(oid))
            v.addWidget(b)
            self.buttons.append(b)
        self.waiting = QLabel("Sent; waiting for the engine")
        self.waiting.setStyleSheet("color: #ffb35c; background: transparent; border: none;")
        self.waiting.hide()
        v.addWidget(self.waiting)

    def _choose(self, option: str) -> None:
        for b in self.buttons:
            b.setEnabled(False)
        self.waiting.show()
        self.ruled.emit(self.prompt.id, option)


class PromptPanel(QWidget):
    """The open prompts, beside the table (never over it)."""

    ruled = Signal(str, str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("promptPanel")
        v = QVBoxLayout(self)
        v.setContentsMargins(0, 0, 0, 0)
        v.setSpacing(10)
        self.none = QLabel("No open irregularities")
        self.none.setFont(_font(15))
        self.none.setStyleSheet("color: #7f8a83;")
        v.addWidget(self.none)
        self.cards: list[PromptCard] = []
        self._v = v

    def set_prompts(self, prompts: tuple[PromptView, ...]) -> None:
        for c in self.cards:
            self._v.removeWidget(c)
            c.deleteLater()
        self.cards = []
        for p in prompts:
            card = PromptCard(p, self)
            card.ruled.connect(self.ruled)
            self._v.addWidget(card)
            self.cards.append(card)
        self.none.setVisible(not prompts)


# --------------------------------------------------------------------------- health


class HealthStrip(QFrame):
    """Broker, engine, shoe and each camera: online or offline, and seconds since last heard."""

    def __init__(self, health: DeviceHealth, parent: QWidget | None = None, columns: int = 0) -> None:
        super().__init__(parent)
        self.health = health
        self.columns = columns  # 0: one row; else a grid this many pills wide (the console's side column)
        self.setObjectName("healthStrip")
        self._h = QGridLayout(self)
        self._h.setContentsMargins(0, 0, 0, 0)
        self._h.setSpacing(4)
        self.pills: dict[str, QLabel] = {}
        self._placed: dict[str, tuple[int, int]] = {}
        self.timer = QTimer(self)
        self.timer.setInterval(1000)
        self.timer.timeout.connect(self.refresh)
        self.timer.start()

    def refresh(self) -> None:
        rows = self.health.rows()
        names = [r.name for r in rows]
        for name in list(self.pills):
            if name not in names:
                self.pills.pop(name).deleteLater()
                self._placed.pop(name, None)
        for i, r in enumerate(rows):
            pill = self.pills.get(r.name)
            if pill is None:
                pill = QLabel(self)
                pill.setObjectName(f"health_{r.device or 'broker'}")
                pill.setAccessibleName(f"health.{r.device or 'broker'}")
                pill.setFont(_font(12, True))
                self.pills[r.name] = pill
            row, col = divmod(i, self.columns) if self.columns else (0, i)
            if self._placed.get(r.name) != (row, col):
                self._h.removeWidget(pill)
                self._h.addWidget(pill, row, col)
                self._placed[r.name] = (row, col)
            state = "" if r.online else " OFFLINE"
            pill.setText(f"● {r.name}{state} {age_text(r.age_s)}")
            pill.setToolTip(f"{r.name} ({r.device or 'broker'}): {'online' if r.online else 'offline'}, "
                            f"last heard {age_text(r.age_s)} ago")
            bg, fg = ("#163d26", "#7ee2a1") if r.online else ("#5a1616", "#ff9a9a")
            restyle(pill, f"color: {fg}; background: {bg}; border-radius: 10px; padding: 3px 6px;")
            pill.setProperty("online", r.online)


# --------------------------------------------------------------------------- dealer inputs


class ReportPanel(QGroupBox):
    """Reports of what no sensor sees; a seat is chosen first where the report needs one."""

    reported = Signal(str, object)  # report id, seat or None

    def __init__(self, reports: tuple[tuple[str, str, bool], ...], parent: QWidget | None = None) -> None:
        super().__init__("Dealer reports", parent)
        self.setObjectName("reportPanel")
        g = QGridLayout(self)
        g.setSpacing(6)
        self.seat = QComboBox()
        self.seat.setObjectName("reportSeat")
        self.seat.setAccessibleName("report.seat")
        self.seat.setMinimumHeight(ROW_PX)
        self.seat.setFont(_font(16))
        g.addWidget(QLabel("Seat"), 0, 0)
        g.addWidget(self.seat, 0, 1)
        self.buttons: dict[str, QPushButton] = {}
        for i, (rid, label, needs_seat) in enumerate(reports):
            b = QPushButton(label)
            b.setObjectName(f"report_{rid}")
            b.setStyleSheet("padding: 2px 4px;")
            b.setAccessibleName(f"report.{rid}")
            b.setMinimumHeight(ROW_PX)
            b.setFont(_font(13, True))
            b.clicked.connect(lambda _=False, rid=rid, s=needs_seat: self.reported.emit(rid, self.current_seat()
                                                                                     if s else None))
            g.addWidget(b, 1 + i // 2, i % 2)
            self.buttons[rid] = b

    def set_seats(self, seats: list[int], default: int | None) -> None:
        current = self.current_seat()
        self.seat.blockSignals(True)
        self.seat.clear()
        for s in seats:
            self.seat.addItem(f"Seat {s}", s)
        pick = current if current in seats else default
        if pick in seats:
            self.seat.setCurrentIndex(seats.index(pick))
        self.seat.blockSignals(False)

    def current_seat(self) -> int | None:
        data = self.seat.currentData()
        return data if isinstance(data, int) else None


def announcement_lines(snap: TableSnapshot, keep: int = 3, small_px: int = 15) -> str:
    """The latest announcements, newest first and brightest (a short history, not one line replaced)."""
    if snap.awards and snap.phase == "complete":
        lines = [award_text(a, snap) for a in snap.awards]
        return "<br>".join(f"<span style='color:#7ee2a1'>{html.escape(x)}</span>" for x in lines)
    texts = [a.text for a in snap.announcements][-keep:][::-1]
    out = []
    for i, text in enumerate(texts):
        colour = "#ffe9a8" if i == 0 else "#9aa39c"
        size = "" if i == 0 else f" font-size: {small_px}px;"
        out.append(f"<span style='color:{colour};{size}'>{html.escape(text)}</span>")
    return "<br>".join(out)


def scroll(widget: QWidget) -> QScrollArea:
    area = QScrollArea()
    area.setWidget(widget)
    area.setWidgetResizable(True)
    area.setFrameShape(QFrame.Shape.NoFrame)
    area.setStyleSheet("QScrollArea, QScrollArea > QWidget > QWidget { background: transparent; }")
    return area
