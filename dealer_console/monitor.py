"""The table monitor: what every player may see, readable from across the table.

It draws the same ``TableView`` as the console, larger, with the game line on
top and the dealer's announcement in big type below; no buttons, no prompts,
no reports.  It is fed only ``public/state`` and logs in with the monitor
role, which the broker never lets read a hole card; and ``snapshot`` names a
down card only once its player has shown it, so even a wrong state could not
make it draw one.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QLabel, QMainWindow, QVBoxLayout, QWidget

from dealer_console.cards import CardImages
from dealer_console.model import TableModel
from dealer_console.widgets import TableView, _font, announcement_lines


class MonitorWindow(QMainWindow):
    def __init__(self, model: TableModel, *, images: CardImages | None = None) -> None:
        super().__init__()
        self.model = model
        self.setWindowTitle("studtable table monitor")
        root = QWidget()
        root.setObjectName("monitorRoot")
        root.setStyleSheet("#monitorRoot { background: #15191c; }")
        self.setCentralWidget(root)
        v = QVBoxLayout(root)
        v.setContentsMargins(16, 10, 16, 14)
        v.setSpacing(8)
        top = QHBoxLayout()
        self.game = QLabel("")
        self.game.setObjectName("monitorGame")
        self.game.setFont(_font(34, True))
        self.game.setStyleSheet("color: #e8ece9;")
        top.addWidget(self.game, 1)
        self.status = QLabel("")
        self.status.setObjectName("monitorStatus")
        self.status.setFont(_font(28, True))
        self.status.setStyleSheet("color: #ff9a9a;")
        top.addWidget(self.status)
        v.addLayout(top)
        self.table = TableView(images or CardImages(), monitor=True)
        v.addWidget(self.table, 1)
        self.announce = QLabel("")
        self.announce.setObjectName("monitorAnnouncement")
        self.announce.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.announce.setFont(_font(40, True))
        self.announce.setTextFormat(Qt.TextFormat.RichText)
        self.announce.setWordWrap(True)
        self.announce.setStyleSheet("color: #ffe9a8; background: #1f2624; border-radius: 14px; padding: 8px;")
        self.announce.setMinimumHeight(86)
        v.addWidget(self.announce)
        model.stateChanged.connect(self.on_state)
        model.healthChanged.connect(self.on_health)
        self.on_state()
        self.on_health()

    def on_state(self) -> None:
        snap = self.model.snapshot
        stakes = f"   {snap.stakes}" if snap.stakes else ""
        self.game.setText(f"{snap.game_name or 'Waiting for the game'}{stakes}")
        self.table.show_snapshot(snap)
        self.announce.setText(announcement_lines(snap, keep=2, small_px=26))

    def on_health(self) -> None:
        self.status.setText("" if self.model.health.engine_reachable else "Table paused")
