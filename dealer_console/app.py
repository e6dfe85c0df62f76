"""Starting the console and the monitor for real: config, credentials, the MQTT edge, the windows.

Config file (TOML or JSON; a whole-table file may nest this under ``[console]``
or ``[monitor]``)::

    table = "t1"
    broker = "127.0.0.1:1883"
    broker_dir = "/etc/studtable/broker"   # credentials.json from `studtable broker config`
    user = "..."                           # or explicit credentials
    password = "..."
    device = "console-1"                   # this screen's device id on the bus
    engine_device = "engine"
    export_dir = "~/studtable-hands"       # where the history page writes an exported hand (PHH and JSON)
    decks_dir = "~/.local/share/studtable/decks"
    shoe_port = "..."                      # no longer used: the bridge owns the shoe's port
    deck_art = "anglo"                     # Aisleriot deck drawn on screen

Command-line options override the file.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from engine.wire import Role


@dataclass
class AppConfig:
    table: str = "t1"
    broker: str = "127.0.0.1:1883"
    broker_dir: str = ""
    user: str = ""
    password: str = ""
    device: str = ""
    engine_device: str = "engine"
    history_db: str = ""  # no longer used: hand history comes from the engine over the bus (see run)
    export_dir: str = ""
    decks_dir: str = ""
    shoe_port: str = ""
    shoe_baud: int = 115200
    deck_art: str = "anglo"
    fullscreen: bool = False
    screen: int | None = None  # which screen of the display (a monitor beside the console)
    config_file: str = ""  # where it was read from, for errors
    from_table: bool = False  # read from the table file (keys named as there)

    @classmethod
    def load(cls, path: Path | None, section: str) -> AppConfig:
        if path is None:
            return cls()
        from engine.configfile import read_config

        data = read_config(path, f"{section} config")
        from engine.tableconfig import part

        table_part = part(path, data, section)  # the table file (engine/tableconfig.py): this screen's part
        if table_part is not None:
            return cls(**table_part, config_file=str(path), from_table=True)
        if isinstance(data.get(section), dict):
            data = {k: v for k, v in data.items() if not isinstance(v, dict)} | data[section]
        known = {f.name for f in fields(cls)} - {"config_file", "from_table"}
        data = {k: v for k, v in data.items() if not isinstance(v, dict)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"config file {path}: unknown setting(s) {', '.join(unknown)}; "
                             f"known: {', '.join(sorted(known))}")
        return cls(**data, config_file=str(path))

    def override(self, **values: Any) -> AppConfig:
        for k, v in values.items():
            if v is not None:
                setattr(self, k, v)
        return self

    def host_port(self) -> tuple[str, int]:
        from engine.configfile import parse_host_port

        return parse_host_port(self.broker, self.config_file or None, "broker.port" if self.from_table else "broker")

    def login(self, role: Role) -> tuple[str, str]:
        from engine.configfile import broker_login

        return broker_login(str(role), broker_dir=self.broker_dir, user=self.user, password=self.password,
                            file=self.config_file or None,
                            key="broker.credentials" if self.from_table else "broker_dir",
                            device=self.device or str(role))


def retired_settings(cfg: AppConfig) -> list[str]:
    """One line per setting the config still names that does nothing now, saying what to do."""
    from engine.configfile import ConfigFileError

    lines = []
    if cfg.history_db:
        # The store holds every live hole card: no screen opens it (docs/security.md).
        lines.append(ConfigFileError(
            cfg.config_file or None, "history_db", "is not used any more: the console does not open the engine's "
            "store (it holds every live hole card); hand history comes from the engine over the bus",
            "delete the history_db line").line())
    return lines


def run(role: Role, cfg: AppConfig) -> int:
    """Open the window for ``role`` and run until it is closed."""
    import sys

    from PySide6.QtWidgets import QApplication

    from dealer_console.cards import CardImages
    from dealer_console.edge import BusEdge, Commands
    from dealer_console.model import TableModel

    host, port = cfg.host_port()
    user, password = cfg.login(role)
    if QApplication.instance() is None:
        # Qt aborts (SIGABRT) when its window platform lacks a system library: look before it loads.
        from engine.configfile import ConfigFileError
        from engine.syspkgs import missing_qt_packages, provide

        line = provide(missing_qt_packages(), f"the {role} window")
        if line:
            raise ConfigFileError(None, None, line, "")
    app = QApplication.instance() or QApplication(sys.argv[:1])
    device = cfg.device or str(role)
    edge = BusEdge(host=host, port=port, username=user, password=password, table=cfg.table, role=role,
                    device=device)
    model = TableModel(engine_device=cfg.engine_device, self_device=device)
    edge.received.connect(model.apply_message)
    edge.connectionChanged.connect(model.set_broker)
    images = CardImages(cfg.deck_art or None)
    window: Any
    if role is Role.MONITOR:
        from dealer_console.monitor import MonitorWindow

        window = MonitorWindow(model, images=images)
    else:
        import logging

        from dealer_console.console import ConsoleWindow
        from dealer_console.edge import BusHistory

        for line in retired_settings(cfg):
            logging.getLogger(__name__).warning("%s", line)
        history = BusHistory(edge)
        if cfg.shoe_port:
            # The bridge owns the shoe's serial port at a real table; two openers would fight over it.
            logging.getLogger(__name__).warning(
                "console: shoe_port = %r is not used any more; the shoe bridge owns the port. Enroll a deck with "
                "`studtable deck enroll --port %s` while the bridge is stopped", cfg.shoe_port, cfg.shoe_port)
        window = ConsoleWindow(model, Commands(edge), images=images, history=history, tag_source=None,
                               decks_dir=str(Path(cfg.decks_dir).expanduser()) if cfg.decks_dir else None,
                               export_dir=cfg.export_dir or None)
    edge.start()
    show_on(window, fullscreen=cfg.fullscreen or role is Role.MONITOR, index=cfg.screen)
    try:
        return int(app.exec())
    finally:
        edge.stop()


def show_on(window: Any, *, fullscreen: bool, index: int | None) -> None:
    """Show the window on screen ``index`` of the display (a monitor beside the console), else the primary.

    A kiosk has no window manager to move a window: it is put on its screen before it is shown.
    An index the display does not have is said in the log, and the primary screen is used.
    """
    import logging

    from PySide6.QtGui import QGuiApplication

    screens = QGuiApplication.screens()
    screen = None
    if index is not None:
        if 0 <= index < len(screens):
            screen = screens[index]
            window.setScreen(screen)
            window.move(screen.geometry().topLeft())
        else:
            logging.getLogger(__name__).warning(
                "screen = %d: this display has %d screen(s) (0 to %d); showing on the primary screen",
                index, len(screens), len(screens) - 1)
    place(window, fullscreen=fullscreen, screen=screen)


def place(window: Any, *, fullscreen: bool, size: tuple[int, int] = (1280, 800), screen: Any = None) -> None:
    """Show the window: full screen (``--fullscreen``, and always for the monitor), else at ``size``.

    On a bare X server with no window manager, ``showFullScreen`` alone leaves a window at its
    size hint (nobody is there to maximise it): it is given the whole screen's geometry first.
    """
    from PySide6.QtCore import QTimer
    from PySide6.QtGui import QGuiApplication

    screen = screen or QGuiApplication.primaryScreen()
    if fullscreen and screen is not None:
        window.setGeometry(screen.geometry())
        window.showFullScreen()
        # The first layout pass may ask for more room than the settled window needs (panels that
        # hide once the state is drawn): set the screen's geometry again once it has settled.
        QTimer.singleShot(0, lambda: window.setGeometry(screen.geometry()))
    else:
        window.resize(*size)
        window.show()
        QTimer.singleShot(0, lambda: window.resize(*size))
