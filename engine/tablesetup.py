"""``studtable setup``: the technician's one command for a real table.

    studtable setup --out /etc/studtable --table t1 [--shoe-port /dev/serial/by-id/...] [--camera 0] ...

writes (or, when ``OUT/table.toml`` already exists, reads and keeps) the table file, then from it

* the broker configuration (``OUT/broker``: mosquitto.conf, passwd, acl, credentials.json) through
  ``engine.broker.config.write_config`` (re-running keeps the passwords);
* one broker login per service (``OUT/broker/logins/DEVICE.json``, mode 0600, root's), each handed
  to its own unit by systemd's ``LoadCredential=`` (readable by the unit's account; services sharing an
  account can read each other's), and
  ``credentials.json`` (every password) stays root's;
* one systemd unit per service (``OUT/systemd``): the table's mosquitto, the engine, the shoe bridge,
  one vision service per camera (niced), the console and the monitor, all under ``studtable.target``;
  the engine starts after the broker, the sensors and the screens after the engine, every one with
  ``Restart=``;
* the state folder for the session counters and decks, with the store in a folder of its own
  (``STATE/store``, mode 0700) that belongs to the engine's own account (``system.engine_user``):
  the store holds every live card, and the screens and sensors run as another account;

and prints the next steps.  The technician edits one file, ``table.toml`` (seats, shoe port, cameras),
and runs ``studtable setup --out DIR`` again to regenerate the rest from it.
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import sys
from pathlib import Path
from typing import Any

from engine.configfile import ConfigFileError, dumps_toml, parse_port
from engine.tableconfig import TableConfig, check_seat_count, check_table_id, load

UNIT_PREFIX = "studtable"


def register(sub: Any) -> None:
    p = sub.add_parser("setup", help="write the table file, the broker config and the systemd units for one table")
    p.add_argument("--out", type=Path, required=True, help="configuration folder, e.g. /etc/studtable")
    p.add_argument("--table", default="t1", help="table id (default t1)")
    p.add_argument("--seats", type=int, default=8, help="seats at the table, 2 to 8 (default 8)")
    p.add_argument("--variant", default="F7S", help="F7S stud, F7S/8 stud high-low, FR razz (default F7S)")
    p.add_argument("--stakes", default="1/2/5/10", help="ANTE/BRING_IN/SMALL_BET/BIG_BET (default 1/2/5/10)")
    p.add_argument("--broker-port", default="1883", help="the table broker's port (default 1883)")
    p.add_argument("--shoe-port", default=None, help="the shoe's serial port (e.g. /dev/serial/by-id/...)")
    p.add_argument("--deck", default="red-1", help="the shoe's enrolled deck (default red-1)")
    p.add_argument("--camera", action="append", default=[], metavar="SOURCE",
                   help="a camera (index, video file or URL); repeat for more")
    p.add_argument("--display", default=":0", help="X display of the screens (default :0)")
    p.add_argument("--monitor-screen", type=int, default=None, help="the monitor on this screen of the display")
    p.add_argument("--user", default="studtable", help="account the sensors and screens run as (default studtable)")
    p.add_argument("--engine-user", default="studtable-engine",
                   help="the engine's own account, the only one that may read the store (default studtable-engine)")
    p.add_argument("--state-dir", type=Path, default=None, help="store and session counters (default /var/lib/studtable)")
    p.add_argument("--units-dir", type=Path, default=None, help="where to write the systemd units (default OUT/systemd)")
    p.add_argument("--force", action="store_true", help="overwrite an existing table.toml from these options")
    p.set_defaults(handler=_setup)


def table_document(args: argparse.Namespace, out: Path) -> dict[str, Any]:
    """The first table file, from the command's options (the technician edits it afterwards)."""
    check_table_id(args.table, None, "--table")
    seats = check_seat_count(args.seats, None, "--seats")
    port = parse_port(args.broker_port, None, "--broker-port")
    try:
        ante, bring_in, small, big = (int(x) for x in str(args.stakes).split("/"))
    except ValueError:
        raise ConfigFileError(None, "--stakes", f"{args.stakes!r} is not ANTE/BRING_IN/SMALL_BET/BIG_BET",
                              "write four whole numbers, e.g. --stakes 1/2/5/10") from None
    state = Path(args.state_dir or "/var/lib/studtable").resolve()
    doc: dict[str, Any] = {
        "table": args.table, "seat_count": seats,
        "game": {"variant": args.variant, "ante": ante, "bring_in": bring_in, "small_bet": small,
                 "big_bet": big, "rules": "rrop"},
        "broker": {"host": "127.0.0.1", "port": port, "credentials": str(out / "broker")},
        "store": {"url": str(state / "store" / f"{args.table}.sqlite")},
    }
    if args.shoe_port:
        doc["shoe"] = {"port": args.shoe_port, "baud": 115200, "deck": args.deck, "device": "shoe-1",
                       "decks_dir": str(state / "decks")}
    if args.camera:
        doc["cameras"] = [{"device": f"cam-{i}", "source": src, "calibration": str(out / f"cam-{i}.json"),
                           "deck": str(out / f"{args.deck}.vision.json")} for i, src in enumerate(args.camera, 1)]
    monitor: dict[str, Any] = {"device": "monitor-1", "display": args.display, "fullscreen": True}
    if args.monitor_screen is not None:
        monitor["screen"] = args.monitor_screen
    doc["screens"] = {"console": {"device": "console-1", "display": args.display, "fullscreen": True},
                      "monitor": monitor}
    doc["system"] = {"user": args.user, "engine_user": args.engine_user, "state_dir": str(state)}
    return doc


COMMENTS = {
    "table": "the table id on the bus",
    "seat_count": "seats at the table, 2 to 8",
    "game": "what is dealt: variant F7S (stud), F7S/8 (stud high-low) or FR (razz); fixed-limit stakes",
    "game.rules": "rrop (Robert's Rules) or wsop2023",
    "broker": "the table's mosquitto (studtable setup writes its files into credentials)",
    "store": "every input and the hand log: a SQLite file, or postgresql://user@host/db for a cardroom",
    "shoe": "the RFID card shoe; remove this section for a table without one",
    "shoe.port": "ls /dev/serial/by-id/ shows the shoe",
    "cameras": "one [[cameras]] per overhead camera; device names start with cam",
    "screens": "the dealer's touch screen and the players' monitor",
    "system": "the accounts the services run as (the engine its own), and where they keep their state",
}


def service_devices(cfg: TableConfig) -> list[tuple[str, str]]:
    """(role, device) of every service ``setup`` writes a unit for."""
    out = [("engine", cfg.engine_device)]
    if cfg.shoe is not None:
        out.append(("bridge", cfg.shoe.device))
    out += [("vision", cam.device) for cam in cfg.cameras]
    out += [(screen.role, screen.device) for screen in cfg.screens]
    return out


def login_file(cfg: TableConfig, device: str) -> Path:
    return Path(cfg.credentials) / "logins" / f"{device}.json"


def _units(cfg: TableConfig, out: Path) -> dict[str, str]:
    """systemd units: name -> text."""
    from engine.configfile import LOGIN_CREDENTIAL

    exe = f"{shlex.quote(sys.executable)} -m engine.cli"
    conf = shlex.quote(str(cfg.path))
    broker_conf = Path(cfg.credentials) / "mosquitto.conf"
    mosquitto = shutil.which("mosquitto") or "/usr/sbin/mosquitto"
    target = f"{UNIT_PREFIX}.target"
    broker = f"{UNIT_PREFIX}-broker.service"
    engine = f"{UNIT_PREFIX}-engine.service"

    def unit(description: str, exec_start: str, *, after: list[str], requires: list[str] | None = None,
             wants: list[str] | None = None, extra: list[str] | None = None, user: bool = True,
             restart: str = "always", device: str | None = None, account: str | None = None) -> str:
        lines = ["[Unit]", f"Description=studtable {description} (table {cfg.table})", f"PartOf={target}"]
        if after:
            lines.append("After=" + " ".join(after))
        if requires:
            lines.append("Requires=" + " ".join(requires))
        if wants:
            lines.append("Wants=" + " ".join(wants))
        lines += ["", "[Service]", f"ExecStart={exec_start}", f"Restart={restart}", "RestartSec=2"]
        if user:
            lines += [f"User={account or cfg.user}", "Environment=PYTHONUNBUFFERED=1"]
        if device is not None:
            # This service's own broker login and no other's (engine.configfile.broker_login reads it).
            lines.append(f"LoadCredential={LOGIN_CREDENTIAL}:{login_file(cfg, device)}")
        lines += extra or []
        lines += ["", "[Install]", f"WantedBy={target}", ""]
        return "\n".join(lines)

    units: dict[str, str] = {
        target: "\n".join([
            "[Unit]", f"Description=studtable table {cfg.table}: broker, engine, sensors and screens",
            "Wants=network-online.target", "After=network-online.target", "",
            "[Install]", "WantedBy=multi-user.target", ""]),
        # mosquitto is started as root and drops to its own user (the `user` line of its config).
        broker: unit("broker (mosquitto)", f"{mosquitto} -c {shlex.quote(str(broker_conf))}",
                     after=["network-online.target"], user=False, restart="on-failure"),
        engine: unit("engine", f"{exe} engine --config {conf}", after=[broker], requires=[broker],
                     device=cfg.engine_device, account=cfg.engine_user),
    }
    if cfg.shoe is not None:
        units[f"{UNIT_PREFIX}-bridge.service"] = unit(
            "shoe bridge", f"{exe} bridge --config {conf}", after=[engine], wants=[engine],
            extra=["SupplementaryGroups=dialout"], device=cfg.shoe.device)
    for cam in cfg.cameras:
        units[f"{UNIT_PREFIX}-vision-{cam.device}.service"] = unit(
            f"vision service {cam.device}", f"{exe} vision run --config {conf} --device {shlex.quote(cam.device)}",
            after=[engine], wants=[engine],
            # The shoe -> engine -> console path is the one the dealer waits on: the camera yields.
            # Nice= orders processes within one group only; where systemd puts every unit in its own
            # CPU cgroup (the controller is on once any unit sets a weight) CPUWeight= is what counts,
            # and 10 against the others' default 100 leaves the engine its core (docs/deploy.md).
            extra=["Nice=10", "CPUWeight=10", "SupplementaryGroups=video"], device=cam.device)
    for screen in cfg.screens:
        flags = " --fullscreen" if screen.fullscreen else ""
        units[f"{UNIT_PREFIX}-{screen.role}.service"] = unit(
            f"{'dealer console' if screen.role == 'console' else 'table monitor'}",
            f"{exe} {screen.role} --config {conf}{flags}", after=[engine], wants=[engine],
            extra=[f"Environment=DISPLAY={screen.display}",
                   f"Environment=XAUTHORITY={_home(cfg.user)}/.Xauthority"], device=screen.device)
    return units


def _setup(args: argparse.Namespace) -> int:
    from engine.broker.config import write_config, write_login

    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    table_file = out / "table.toml"
    if table_file.exists() and not args.force:
        print(f"keeping {table_file} (edit it, or --force to rewrite it from the options)")
    else:
        table_file.write_text(
            "# The table's one configuration file: every studtable service reads its part of it.\n"
            "# Edit it, then run `studtable setup --out " + str(out) + "` again to regenerate the rest.\n\n"
            + dumps_toml(table_document(args, out), COMMENTS), encoding="utf-8")
        os.chmod(table_file, 0o644)
        print(f"wrote {table_file}")
    cfg = load(table_file)

    state = Path(cfg.state_dir)
    try:
        state.mkdir(parents=True, exist_ok=True)
    except PermissionError:
        raise ConfigFileError(table_file, "system.state_dir", f"cannot create {state} (permission denied)",
                              "run studtable setup as root, or set state_dir to a folder you may write") from None
    run_as = "mosquitto" if _user_exists("mosquitto") else None
    files = write_config(cfg.credentials, host=cfg.broker_host, port=cfg.broker_port, table=cfg.table,
                         data_dir=state / "mosquitto", run_as=run_as)
    print(f"wrote the broker config in {files.directory} (mosquitto.conf, passwd, acl, credentials.json)")
    for role, device in service_devices(cfg):
        # root's, 0600: systemd reads it and hands it to that one service (LoadCredential=).
        write_login(files, role, device)
    print(f"wrote one broker login per service in {files.logins_dir}")
    store_dir = _store_folder(cfg)
    if store_dir is not None and (store_dir == state.resolve() or store_dir in state.resolve().parents):
        print(f"warning: the store {cfg.store} shares {store_dir} with the other services; move it into a "
              f"folder of its own (store.url = \"{state / 'store' / Path(cfg.store).name}\") so that only the "
              "engine can read it")
        store_dir = None
    if os.geteuid() == 0:
        import pwd

        if _user_exists(cfg.user):
            pw = pwd.getpwnam(cfg.user)
            store_files = _store_files(cfg)
            for path in [state, *state.iterdir()]:
                # Never the store (nor its -wal/-shm), wherever it lies: the screens' account must
                # not own what holds every live card, and the engine must go on writing it.
                if path.name != "mosquitto" and path != store_dir and path.resolve() not in store_files:
                    os.chown(path, pw.pw_uid, pw.pw_gid)
        if store_dir is not None and _user_exists(cfg.engine_user):
            # Only the engine opens the store (every live card is in it): its folder is the engine's, 0700.
            engine_pw = pwd.getpwnam(cfg.engine_user)
            for path in [store_dir, *store_dir.iterdir()]:
                os.chown(path, engine_pw.pw_uid, engine_pw.pw_gid)
            os.chmod(store_dir, 0o700)

    units_dir = (args.units_dir or out / "systemd").resolve()
    units_dir.mkdir(parents=True, exist_ok=True)
    units = _units(cfg, out)
    for name, text in units.items():
        (units_dir / name).write_text(text, encoding="utf-8")
    print(f"wrote {len(units)} systemd units in {units_dir}: {', '.join(sorted(units))}")

    steps = [f"edit {table_file}: the seats, the shoe's port, the cameras (then run this command again)"]
    if not _user_exists(cfg.user):
        steps.append(f"create the services' account: sudo useradd --system --create-home {cfg.user}")
    if not _user_exists(cfg.engine_user):
        steps.append(f"create the engine's own account: sudo useradd --system --no-create-home {cfg.engine_user}")
    if not _user_exists(cfg.user) or not _user_exists(cfg.engine_user):
        steps.append("then run this command again (as root), so the state folders get their owners")
    if cfg.shoe is not None:
        decks = f" --decks {cfg.shoe.decks_dir}" if cfg.shoe.decks_dir else ""
        steps.append(f"enroll the shoe's deck: studtable deck enroll {cfg.shoe.deck or 'red-1'} --port "
                     f"{cfg.shoe.port}{decks}")
    for cam in cfg.cameras:
        steps.append(f"calibrate {cam.device}: studtable vision calibrate --camera {cam.source} "
                     f"--seats {cfg.seat_count} --out {cam.calibration}; and enroll the deck's faces: "
                     f"studtable vision enroll --faces FACES_DIR --out {cam.deck}")
    if units_dir != Path("/etc/systemd/system"):
        steps.append(f"install the units: sudo cp {units_dir}/*.service {units_dir}/*.target /etc/systemd/system/")
    steps.append(f"start the table: sudo systemctl daemon-reload && sudo systemctl enable --now {UNIT_PREFIX}.target")
    steps.append(f"watch it: journalctl -f -u '{UNIT_PREFIX}-*'")
    print("next steps:")
    for i, step in enumerate(steps, 1):
        print(f"  {i}. {step}")
    return 0


def _store_files(cfg: TableConfig) -> set[Path]:
    if "://" in cfg.store:
        return set()
    db = Path(cfg.store).expanduser().resolve()
    return {db, db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")}


def _store_folder(cfg: TableConfig) -> Path | None:
    """The SQLite store's folder, created 0700 (None for a PostgreSQL store: the server guards it)."""
    if "://" in cfg.store:
        return None
    folder = Path(cfg.store).expanduser().resolve().parent
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    return folder


def _home(user: str) -> str:
    import pwd

    try:
        return pwd.getpwnam(user).pw_dir
    except KeyError:
        return f"/home/{user}"


def _user_exists(name: str) -> bool:
    import pwd

    try:
        pwd.getpwnam(name)
    except KeyError:
        return False
    return True
