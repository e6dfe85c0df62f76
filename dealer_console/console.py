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
from dealer_console.edge import REPORTS, Commands
from dealer_console.enroll import EnrollWizard, TagSource
from dealer_console.history import HistorySource
from dealer_console.history_view import HistoryBrowser
from dealer_console.model import TableModel
from dealer_console.snapshot import OptionView
from dealer_console.widgets import (
    ActionBar,
    HealthStrip,
    ManualCardPanel,
    PromptPanel,
    ReportPanel,
    TableView,
    _font,
    scroll,
)
from engine.cards import Card, CardError

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


class ConsoleWindow(QMainWindow):
    """The dealer's touch screen."""

    def __init__(self, model: TableModel, commands: Commands, *, images: CardImages | None = None,
                 history: HistorySource | None = None,
                 tag_source: Callable[[], TagSource] | None = None, decks_dir: str | None = None,
                 title: str = "studtable dealer console") -> None:
        super().__init__()
        self.model = model
        self.commands = commands
        self.images = images or CardImages()
        self.setWindowTitle(title)
        self.setStyleSheet(STYLE)
        root = QWidget()
        root.setObjectName("consoleRoot")
        self.setCentralWidget(root)
        outer = QVBoxLayout(root)
        outer.setContentsMargins(10, 8, 10, 10)
        outer.setSpacing(8)

        # top: game line, device health, page buttons
        top = QHBoxLayout()
        self.page_buttons: dict[str, QPushButton] = {}
        for name in ("Table", "History", "Deck"):
            b = QPushButton(name)
            b.setObjectName(f"page_{name.lower()}")
            b.setCheckable(True)
            b.setMinimumHeight(36)
            b.setFont(_font(15, True))
            top.addWidget(b)
            self.page_buttons[name] = b
        top.addSpacing(10)
        self.game = QLabel("")
        self.game.setObjectName("gameLine")
        self.game.setFont(_font(16, True))
        self.game.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        top.addWidget(self.game, 1)
        self.health_strip = HealthStrip(model.health)
        top.addWidget(self.health_strip)
        outer.addLayout(top)

        self.banner = QLabel("ENGINE UNREACHABLE: controls locked until it is back. Keep the cards where they are.")
        self.banner.setObjectName("engineBanner")
        self.banner.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.banner.setFont(_font(20, True))
        self.banner.setStyleSheet("color: white; background: #b3261e; border-radius: 8px; padding: 8px;")
        outer.addWidget(self.banner)

        self.pages = QStackedWidget()
        outer.addWidget(self.pages, 1)

        # the table page
        table_page = QWidget()
        h = QHBoxLayout(table_page)
        h.setContentsMargins(0, 0, 0, 0)
        h.setSpacing(10)
        left = QVBoxLayout()
        left.setSpacing(8)
        self.table = TableView(self.images)
        left.addWidget(self.table, 1)
        self.announce = QLabel("")
        self.announce.setObjectName("announcement")
        self.announce.setFont(_font(24, True))
        self.announce.setStyleSheet("color: #ffe9a8; background: #1b2220; border-radius: 8px; padding: 6px 14px;")
        self.announce.setMinimumHeight(48)
        left.addWidget(self.announce)
        self.actions = ActionBar()
        left.addWidget(self.actions)
        h.addLayout(left, 1)

        side = QWidget()
        side.setFixedWidth(340)
        sv = QVBoxLayout(side)
        sv.setContentsMargins(0, 0, 0, 0)
        sv.setSpacing(8)
        self.prompts = PromptPanel()
        sv.addWidget(scroll(self.prompts), 1)
        self.reports = ReportPanel(REPORTS)
        sv.addWidget(self.reports)
        self.manual = ManualCardPanel(parse_manual_card)
        sv.addWidget(self.manual)
        h.addWidget(side)
        self.pages.addWidget(table_page)

        self.history = HistoryBrowser(history, self.images)
        self.pages.addWidget(self.history)
        self.enroll = EnrollWizard(self.images, tag_source, decks_dir)
        self.pages.addWidget(self.enroll)
        for i, name in enumerate(("Table", "History", "Deck")):
            self.page_buttons[name].clicked.connect(lambda _=False, i=i: self.show_page(i))
        self.show_page(0)

        # wiring: models -> widgets, widgets -> commands
        model.stateChanged.connect(self.on_state)
        model.promptsChanged.connect(self.on_prompts)
        model.healthChanged.connect(self.on_health)
        self.actions.chosen.connect(self.on_action)
        self.prompts.ruled.connect(self.commands.ruling)
        self.reports.reported.connect(lambda rid, seat: self.commands.report(rid, seat))
        self.manual.entered.connect(self.commands.manual_card)
        self.on_state()
        self.on_prompts()
        self.on_health()

    def show_page(self, index: int) -> None:
        self.pages.setCurrentIndex(index)
        for i, b in enumerate(self.page_buttons.values()):
            b.setChecked(i == index)
        if index == 1:
            self.history.reload()

    # -- model -> view --------------------------------------------------------
    def on_state(self) -> None:
        snap = self.model.snapshot
        hand = f" · hand {snap.hand_id}" if snap.hand_id is not None else ""
        limits = f" {snap.limits}" if snap.limits else ""
        self.game.setText(f"{snap.game_name or 'No game'}{limits}{hand}")
        self.game.setToolTip(f"{snap.game_name} {snap.stakes} ({snap.rules} rules)")
        self.table.show_snapshot(snap, {s for p in self.model.prompts for s in p.seats})
        self.announce.setText(snap.announcement)
        if snap.phase == "dealing":
            idle = "Dealing…"
        elif snap.phase == "showdown":
            idle = f"{snap.acting_name} to show" if snap.to_act else "Showdown"
        elif snap.phase == "complete":
            idle = "Hand over"
        else:
            idle = "Waiting for the next hand" if snap.phase == "idle" else ""
        self.actions.set_options(snap.options if snap.to_act is not None else (), idle)
        seats = [s.seat for s in snap.seats if s.in_hand or s.name]
        self.reports.set_seats(seats, snap.to_act)
        self.manual.set_seats(seats)
        self._apply_enabled()

    def on_prompts(self) -> None:
        self.prompts.set_prompts(self.model.prompts)
        # An open ruling gets the whole side column: reports and manual entry wait until it is ruled.
        open_prompt = bool(self.model.prompts)
        self.reports.setVisible(not open_prompt)
        self.manual.setVisible(not open_prompt)
        self.table.show_snapshot(self.model.snapshot, {s for p in self.model.prompts for s in p.seats})
        self._apply_enabled()

    def on_health(self) -> None:
        self.health_strip.refresh()
        self._apply_enabled()

    def _apply_enabled(self) -> None:
        ok = self.model.controls_enabled
        self.banner.setVisible(not ok)
        for w in (self.actions, self.prompts, self.reports, self.manual):
            w.setEnabled(ok)

    # -- view -> commands -----------------------------------------------------
    def on_action(self, option: OptionView) -> None:
        seat = self.model.snapshot.to_act
        if seat is None or not self.model.controls_enabled:
            return
        self.commands.action(seat, option)
