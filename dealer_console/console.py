"""The dealer console window: the table, the actions, prompts, reports, health, history, deck enrollment.

What the dealer must get at a glance (issue 7): who acts and what each option
costs (big buttons, exact amounts from the engine, one key each), what an
irregularity requires (a panel beside the table, never over it), and whether
the system can be trusted right now (the health strip; a red banner and
locked controls while the engine is unreachable, because an action the engine
never receives is worse than no button at all).

The window only wires models to widgets and widgets to ``Commands``.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QMainWindow,
    QPushButton,
    QSizePolicy,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from dealer_console.cards import CardImages
from dealer_console.controls import (
    ROW_PX,
    CardPicker,
    ManualCardPanel,
    RefusalLabel,
    SeatingPage,
    ShowdownPanel,
    TapGuard,
)
from dealer_console.corrections import CorrectionPanel, GamePage
from dealer_console.edge import REPORTS, Commands
from dealer_console.enroll import EnrollWizard, TagSource
from dealer_console.history import HistorySource
from dealer_console.history_view import DEFAULT_EXPORT_DIR, HistoryBrowser
from dealer_console.model import TableModel
from dealer_console.snapshot import OptionView
from dealer_console.widgets import (
    ActionBar,
    HealthStrip,
    PromptPanel,
    ReportPanel,
    TableView,
    _font,
    announcement_lines,
    scroll,
)
from engine.cards import Card, CardError

PAGES = ("Table", "Seats", "Game", "History", "Deck")

STYLE = """
QMainWindow, QWidget#consoleRoot { background: #101416; }
QLabel { color: #e8ece9; }
QGroupBox { color: #cfd8d3; font-size: 15px; font-weight: bold; border: 1px solid #2c3633;
            border-radius: 10px; margin-top: 14px; padding-top: 8px; }
QGroupBox::title { subcontrol-origin: margin; left: 10px; padding: 0 4px; }
QPushButton { color: #e8ece9; background: #27312e; border: 1px solid #3c4a45; border-radius: 8px; padding: 4px 8px; }
QPushButton:checked { background: #2f6aa0; }
QPushButton:disabled { color: #66706b; background: #1b2220; }
QComboBox, QLineEdit { color: #e8ece9; background: #1b2220; border: 1px solid #3c4a45; border-radius: 6px; padding: 2px 6px; }
QListWidget { color: #e8ece9; background: #161c1a; border: 1px solid #2c3633; font-size: 16px; }
QProgressBar { color: white; background: #1b2220; border: 1px solid #3c4a45; border-radius: 6px; text-align: center;
               font-size: 16px; font-weight: bold; min-height: 30px; }
QProgressBar::chunk { background: #2b8a4a; border-radius: 6px; }
"""


def parse_manual_card(text: str) -> str:
    """``ah``/``AH``/``10h`` -> ``Ah``/``Th``; ``??`` is an unknown down card.  ValueError says what is wrong."""
    raw = text.strip()
    if raw == "??":
        return "??"
    if raw[:2] == "10":
        raw = "T" + raw[2:]
    if len(raw) != 2:
        raise ValueError(f"{text!r} is not a card; type a rank and a suit, e.g. Ah, Td, 9c, or ?? if unknown")
    try:
        return str(Card.parse(raw[0].upper() + raw[1].lower()))
    except CardError as exc:
        raise ValueError(f"{text!r} is not a card ({exc})") from None


#: which panel shows the engine's refusal of each command kind (issue 21, 6)
REFUSAL_AREA = {"action": "action", "show": "showdown", "muck": "showdown", "ruling": "prompt", "report": "report",
                "manual_card": "manual", "table": "seating", "correction": "correction"}


class ConsoleWindow(QMainWindow):
    """The dealer's touch screen.  Every control has a stable accessible name (docs/console.md)."""

    def __init__(self, model: TableModel, commands: Commands, *, images: CardImages | None = None,
                 history: HistorySource | None = None,
                 tag_source: Callable[[], TagSource] | None = None, decks_dir: str | None = None,
                 export_dir: str | None = None, title: str = "studtable dealer console", tap_guard_s: float = 0.4) -> None:
        super().__init__()
        self.model = model
        self.commands = commands
        self.images = images or CardImages()
        self.tap_guard = TapGuard(tap_guard_s, parent=self)
        self.setWindowTitle(title)
        self.setStyleSheet(STYLE)
        root = QWidget()
        root.setObjectName("consoleRoot")
        self.setCentralWidget(root)
        outer = QVBoxLayout(root)
        outer.setContentsMargins(10, 8, 10, 10)
        outer.setSpacing(8)

        # top: page buttons, game line, device health
        top = QHBoxLayout()
        self.page_buttons: dict[str, QPushButton] = {}
        for name in PAGES:
            b = QPushButton(name)
            b.setObjectName(f"page_{name.lower()}")
            b.setAccessibleName(f"page.{name.lower()}")
            b.setCheckable(True)
            b.setMinimumHeight(ROW_PX)
            b.setFont(_font(15, True))
            top.addWidget(b)
            self.page_buttons[name] = b
        top.addSpacing(10)
        self.game = QLabel("")
        self.game.setObjectName("gameLine")
        self.game.setAccessibleName("game-line")
        self.game.setFont(_font(16, True))
        self.game.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        top.addWidget(self.game, 1)
        outer.addLayout(top)

        self.banner = QLabel("")
        self.banner.setObjectName("engineBanner")
        self.banner.setAccessibleName("banner")
        self.banner.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.banner.setWordWrap(True)
        self.banner.setFont(_font(17, True))  # one or two lines: the page under it keeps 1024x600 (issue 21, 10)
        self.banner.setStyleSheet("color: white; background: #b3261e; border-radius: 8px; padding: 4px 8px;")
        outer.addWidget(self.banner)

        self.pages = QStackedWidget()
        outer.addWidget(self.pages, 1)

        # the table page
        table_page = QWidget()
        h = QHBoxLayout(table_page)
        h.setContentsMargins(0, 0, 0, 0)
        h.setSpacing(10)
        left = QVBoxLayout()
        left.setSpacing(6)
        self.center = QStackedWidget()
        self.table = TableView(self.images)
        self.center.addWidget(self.table)
        self.picker = CardPicker()
        self.center.addWidget(self.picker)
        left.addWidget(self.center, 1)
        self.announce = QLabel("")
        self.announce.setObjectName("announcement")
        self.announce.setAccessibleName("announcements")
        self.announce.setTextFormat(Qt.TextFormat.RichText)
        self.announce.setWordWrap(True)
        self.announce.setFont(_font(20, True))
        self.announce.setStyleSheet("color: #ffe9a8; background: #1b2220; border-radius: 8px; padding: 4px 14px;")
        self.announce.setMinimumHeight(ROW_PX)
        left.addWidget(self.announce)
        self.action_bar = ActionBar()
        self.action_bar.guard = self.tap_guard
        left.addWidget(self.action_bar)
        self.action_refusal = RefusalLabel("action")
        left.addWidget(self.action_refusal)
        self.showdown = ShowdownPanel()
        for b in self.showdown.buttons:
            self.tap_guard.guard(b)
        left.addWidget(self.showdown)
        self.next_hand = QPushButton("Next hand")
        self.next_hand.setAccessibleName("hand.next")
        self.next_hand.setObjectName("hand.next")
        self.next_hand.setMinimumHeight(64)
        self.next_hand.setFont(_font(24, True))
        self.next_hand.setStyleSheet("QPushButton { color: white; background: #24527a; border-radius: 12px; }")
        self.tap_guard.guard(self.next_hand)
        left.addWidget(self.next_hand)
        h.addLayout(left, 1)

        side = QWidget()
        side.setFixedWidth(324)  # the scroll area's 340 less its scroll bar
        sv = QVBoxLayout(side)
        sv.setContentsMargins(0, 0, 0, 0)
        sv.setSpacing(6)
        # Device health at the top of the side column (two pills a row), so the game line keeps its room.
        self.health_strip = HealthStrip(model.health, columns=2)
        sv.addWidget(self.health_strip)
        self.prompts = PromptPanel()
        sv.addWidget(self.prompts)
        self.prompt_refusal = RefusalLabel("prompt")
        sv.addWidget(self.prompt_refusal)
        self.reports = ReportPanel(REPORTS)
        sv.addWidget(self.reports)
        self.report_refusal = RefusalLabel("report")
        sv.addWidget(self.report_refusal)
        self.manual = ManualCardPanel()
        sv.addWidget(self.manual)
        self.correction = CorrectionPanel()
        sv.addWidget(self.correction)
        sv.addStretch(0)
        # The side column scrolls on a small screen (1024x600) instead of squeezing the table.
        side_scroll = scroll(side)
        side_scroll.setFixedWidth(340)
        side_scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        h.addWidget(side_scroll)
        self.pages.addWidget(table_page)

        self.seating = SeatingPage()
        self.pages.addWidget(self.seating)
        self.game_page = GamePage()
        self.pages.addWidget(self.game_page)
        self.history = HistoryBrowser(history, self.images, export_dir=export_dir or DEFAULT_EXPORT_DIR)
        self.pages.addWidget(self.history)
        self.enroll = EnrollWizard(self.images, tag_source, decks_dir)
        self.pages.addWidget(self.enroll)
        for i, name in enumerate(PAGES):
            self.page_buttons[name].clicked.connect(lambda _=False, i=i: self.show_page(i))
        self.show_page(0)
        self.refusals: dict[str, RefusalLabel] = {
            "action": self.action_refusal, "showdown": self.showdown.refusal, "prompt": self.prompt_refusal,
            "report": self.report_refusal, "manual": self.manual.refusal, "seating": self.seating.refusal,
            "correction": self.correction.refusal, "game": self.game_page.refusal}
        self._picker_for: tuple[str, int | None] | None = None
        self.sent = 0  # commands sent from this screen
        self._shown_error: object = None
        self._sent_from: dict[str, str] = {}  # command kind -> the panel of the control that last sent it

        # wiring: models -> widgets, widgets -> commands
        model.stateChanged.connect(self.on_state)
        model.promptsChanged.connect(self.on_prompts)
        model.healthChanged.connect(self.on_health)
        self.action_bar.chosen.connect(self.on_action)
        self.prompts.ruled.connect(lambda pid, oid: self._send("ruling", lambda: self.commands.ruling(pid, oid)))
        self.reports.reported.connect(
            lambda rid, seat: self._send("report", lambda: self.commands.report(rid, seat)))
        self.manual.entered.connect(
            lambda seat, card, up: self._send("manual_card", lambda: self.commands.manual_card(seat, card, up)))
        self.manual.common_entered.connect(
            lambda card: self._send("manual_card", lambda: self.commands.common_card(card)))
        self.manual.wants_picker.connect(self._pick_manual)
        self.showdown.show_known.connect(lambda seat: self._send("show", lambda: self.commands.show(seat, [])))
        self.showdown.muck.connect(lambda seat: self._send("muck", lambda: self.commands.muck(seat)))
        # RRoP 3.3(d), 3.6: a kill is the dealer's report; the engine opens its prompt to confirm first.
        self.showdown.kill.connect(lambda seat: self._send(
            "report", lambda: self.commands.report("showdown_kill", seat), area="showdown"))
        self.showdown.pick.connect(self._pick_shown)
        self.picker.picked.connect(self._picked)
        self.picker.cancelled.connect(self._close_picker)
        self.next_hand.clicked.connect(lambda: self._send("table", lambda: self.commands.table("start_hand", None),
                                                           area="action"))
        self.correction.undo.connect(lambda hand, entry, pin: self._send(
            "correction", lambda: self.commands.correction(hand, entry, pin), area="correction"))
        self.game_page.change.connect(lambda game: self._send("table", lambda: self.commands.game(game), area="game"))
        self.seating.command.connect(
            lambda op, seat, fields: self._send("table", lambda: self.commands.table(op, seat, **fields)))
        self.on_state()
        self.on_prompts()
        self.on_health()

    def show_page(self, index: int) -> None:
        self.pages.setCurrentIndex(index)
        for i, b in enumerate(self.page_buttons.values()):
            b.setChecked(i == index)
        if PAGES[index] == "History":
            self.history.reload()

    # -- model -> view --------------------------------------------------------
    def on_state(self) -> None:
        snap = self.model.snapshot
        hand = f" · hand {snap.hand_id}" if snap.hand_id is not None else ""
        limits = f" {snap.limits}" if snap.limits else ""
        nxt = self.model.raw_state.get("next_game")
        later = f" · next hand: {nxt.get('name')} {nxt.get('small_bet')}/{nxt.get('big_bet')}" \
            if isinstance(nxt, dict) else ""
        self.game.setText(f"{snap.game_name or 'No game'}{limits}{hand}{later}")
        self.game.setToolTip(f"{snap.game_name} {snap.stakes} ({snap.rules} rules)")
        self.table.show_snapshot(snap, {s for p in self.model.prompts for s in p.seats})
        self.announce.setText(announcement_lines(snap))
        # Hide before showing: the bottom panels never share the screen, and a moment with two of them
        # shown would raise the window's minimum height past a 600-px screen (issue 21, 10).
        between = snap.phase in ("idle", "complete")
        at_showdown = snap.phase == "showdown" and snap.to_act is not None
        if at_showdown or between:
            self.action_bar.setVisible(False)
        if not between:
            self.next_hand.setVisible(False)
        showdown = self.showdown.set_snapshot(snap)
        if snap.phase == "dealing":
            idle = "Dealing…"
        elif snap.phase == "complete":
            idle = "Hand over: tap Next hand when the pot is pushed"
        else:
            idle = "Waiting for the next hand" if snap.phase == "idle" else ""
        betting = snap.to_act is not None and snap.phase == "betting"
        self.action_bar.set_options(snap.options if betting else (), idle)
        self.action_bar.setVisible(not showdown and not between)
        self.next_hand.setVisible(between)
        self.next_hand.setText("Next hand" if snap.phase == "complete" else "Deal the first hand"
                               if snap.hand_id is None else "Next hand")
        seats = [s.seat for s in snap.seats if s.in_hand or s.name]
        self.reports.set_seats(seats, snap.to_act)
        nd = self.model.raw_state.get("next_deal")
        self.manual.set_snapshot(snap, [d for d in nd if isinstance(d, dict)] if isinstance(nd, list) else [])
        self.seating.set_snapshot(snap)
        self.correction.set_entries(self.model.raw_state.get("dealer_inputs"))
        self.game_page.set_state(self.model.raw_state.get("game"), self.model.raw_state.get("next_game"),
                                 snap.phase not in ("idle", "complete"))
        self._show_refusal()
        self._apply_enabled()

    def _show_refusal(self) -> None:
        err = self.model.raw_state.get("last_error")
        # The same refusal again (the dealer tapped again) comes with the new input's key: shown again.
        key = (err, self.model.raw_state.get("input"))
        if not isinstance(err, dict) or key == self._shown_error:
            return
        if err.get("source") != self.model.health.self_device:
            return
        self._shown_error = key
        kind = str(err.get("input"))
        area = self._sent_from.get(kind) or REFUSAL_AREA.get(kind, "action")
        self.refusals[area].show_reason(str(err.get("reason") or "refused"))

    def on_prompts(self) -> None:
        self.prompts.set_prompts(self.model.prompts)
        for card in self.prompts.cards:
            for b in card.buttons:
                self.tap_guard.guard(b)
        # An open ruling gets the side column; the reports wait, manual entry stays usable when the
        # ruling says to key cards by hand (a prompt about a device that is down).
        open_prompt = bool(self.model.prompts)
        self.reports.setVisible(not open_prompt)
        self.manual.setVisible(not open_prompt or any(p.rule.startswith("source.") or "by hand" in p.text
                                                      for p in self.model.prompts))
        self.table.show_snapshot(self.model.snapshot, {s for p in self.model.prompts for s in p.seats})
        self._apply_enabled()

    def on_health(self) -> None:
        self.health_strip.refresh()
        self._apply_enabled()

    def _apply_enabled(self) -> None:
        ok = self.model.controls_enabled
        if not self.model.health.broker_online:
            self.banner.setText("BROKER UNREACHABLE: this screen has lost the table's network (the broker). "
                                "Controls locked until it is back. Keep the cards where they are.")
        else:
            self.banner.setText("ENGINE UNREACHABLE: controls locked until it is back. Keep the cards where they are.")
        self.banner.setVisible(not ok)
        for w in (self.action_bar, self.prompts, self.reports, self.manual, self.showdown, self.next_hand,
                  self.picker, self.seating, self.correction, self.game_page):
            w.setEnabled(ok)

    # -- view -> commands -----------------------------------------------------
    def _send(self, kind: str, send: Callable[[], object], area: str | None = None) -> None:
        """Send a command; its refusal shows in ``area`` (default: the kind's, ``REFUSAL_AREA``)."""
        if not self.model.controls_enabled:
            return
        for r in self.refusals.values():
            r.show_reason(None)
        self._sent_from[kind] = area or REFUSAL_AREA.get(kind, "action")
        send()
        self.sent += 1

    def on_action(self, option: OptionView) -> None:
        seat = self.model.snapshot.to_act
        if seat is None:
            return
        self._send("action", lambda: self.commands.action(seat, option))

    def _pick_manual(self, title: str) -> None:
        self._picker_for = ("manual", None)
        self.picker.begin(title, 1, allow_unknown=True)
        self.center.setCurrentWidget(self.picker)

    def _pick_shown(self, seat: int) -> None:
        s = self.model.snapshot.seat(seat)
        count = s.down_count if s is not None else 3
        self._picker_for = ("show", seat)
        self.picker.begin(f"Seat {seat} shows: tap its {count} down cards", count)
        self.center.setCurrentWidget(self.picker)

    def _picked(self, cards: list[str]) -> None:
        target = self._picker_for
        self._close_picker()
        if target is None:
            return
        kind, seat = target
        if kind == "manual":
            self.manual.take(cards[0])
        elif seat is not None:
            self._send("show", lambda: self.commands.show(seat, cards))

    def _close_picker(self) -> None:
        self._picker_for = None
        self.center.setCurrentWidget(self.table)
