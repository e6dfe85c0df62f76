"""Generate the broker configuration: mosquitto.conf, the password file, the ACL and the credentials.

This is an edge (it writes files and draws random passwords); what goes in
the files comes from the pure ``engine.broker.acl`` and ``engine.broker.passwd``.

The output directory holds:

``mosquitto.conf``   the deployment broker's configuration (absolute paths)
``passwd``           one ``$7$`` hash per user (mosquitto 2 format; amqtt reads it too)
``acl``              the access rules per user (mosquitto format; amqtt reads it too)
``credentials.json`` each role's username and clear password, and each usual device id's
                     own password (``devices``), mode 0600: hand each service only its own
                     login (``logins/DEVICE.json``, written by ``write_login``).  Re-running
                     keeps these passwords, so re-generating never locks out running services.

Every device user has a password of its own: a console that knows its own login cannot log in
as another console (or take its client id), which a password shared by the role allowed.
"""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from engine.broker.acl import broker_users, build_acl, device_role, render_acl
from engine.broker.passwd import hash_password, render_password_file
from engine.wire import MAX_PAYLOAD_BYTES, Role

#: Why not mosquitto's default of 1000: once a client's queue is full mosquitto
#: drops further QoS 1 messages for it while the publisher still gets its PUBACK,
#: so nobody notices.  The engine (a persistent session) must be able to be away
#: for a restart or a long GC pause without losing a card.  A whole table sends
#: well under 20 messages a second (cards, debounced camera changes, dealer
#: input, state snapshots), so 100000 is over an hour of the table's entire
#: traffic, and at ~2 KB a message under 200 MB in the worst case.  A client
#: further behind than that is dead, not slow; if it ever happens the engine's
#: SourceTracker sees the sequence gap and prompts the dealer, and consoles
#: recover from the retained public/state.
MAX_QUEUED_MESSAGES: Final = 100_000
#: The largest MQTT packet the broker takes: the wire's largest payload plus room for topic and headers.
MAX_PACKET_BYTES: Final = MAX_PAYLOAD_BYTES + 65_536

DEFAULT_HOST: Final = "127.0.0.1"
DEFAULT_PORT: Final = 1883


@dataclass(frozen=True)
class BrokerFiles:
    """Where the generated files are and how each role logs in."""

    directory: Path
    host: str
    port: int
    table: str
    credentials: Mapping[Role, tuple[str, str]] = field(repr=False)
    #: device user -> its own password (``engine.broker.acl.device_names``)
    devices: Mapping[str, str] = field(default_factory=dict, repr=False)

    @property
    def mosquitto_conf(self) -> Path:
        return self.directory / "mosquitto.conf"

    @property
    def password_file(self) -> Path:
        return self.directory / "passwd"

    @property
    def acl_file(self) -> Path:
        return self.directory / "acl"

    @property
    def credentials_file(self) -> Path:
        return self.directory / "credentials.json"

    @property
    def logins_dir(self) -> Path:
        return self.directory / "logins"

    def login(self, role: Role | str, device: str | None = None) -> tuple[str, str]:
        """``(username, password)`` a process of ``role`` logs in with: ``device``'s own login when
        the broker has a user of that name for the role (``engine.broker.acl.device_names``), else
        the role's."""
        role = Role(role)
        if device is not None and device != self.credentials[role][0] and device_role(device) is role:
            password = self.devices.get(device)
            if password is not None:
                return device, password
        return self.credentials[role]


def _load_credentials(path: Path) -> tuple[dict[Role, tuple[str, str]], dict[str, str]]:
    if not path.exists():
        return {}, {}
    try:
        doc = json.loads(path.read_text("utf-8"))
        roles = {Role(role): (entry["username"], entry["password"]) for role, entry in doc.items()
                 if role != "devices"}
        devices = {str(name): str(pw) for name, pw in dict(doc.get("devices", {})).items()}
        return roles, devices
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ValueError(
            f"{path} is not a studtable credentials file ({exc}); move it away to generate new passwords"
        ) from exc


def load_files(directory: str | Path) -> BrokerFiles:
    """Read back a directory written by ``write_config`` (for the embedded broker and the tests)."""
    directory = Path(directory).resolve()
    meta_path = directory / "studtable-broker.json"
    if not meta_path.exists():
        raise FileNotFoundError(
            f"{directory} holds no generated broker config; run: studtable broker config --out {directory}"
        )
    meta = json.loads(meta_path.read_text("utf-8"))
    return BrokerFiles(
        directory,
        meta["host"],
        int(meta["port"]),
        meta["table"],
        *_load_credentials(directory / "credentials.json"),
    )


def render_mosquitto_conf(
    files: BrokerFiles, *, data_dir: Path, run_as: str | None = None, log_file: Path | None = None
) -> str:
    lines = [
        "# studtable: mosquitto configuration (generated by `studtable broker config`).",
        "# Re-generate rather than edit; the rules come from engine/wire.py.",
        "",
        "per_listener_settings false",
        f"listener {files.port} {files.host}",
        "protocol mqtt",
        "",
        "# Nobody gets in without a role's credentials; the ACL then limits each role.",
        "allow_anonymous false",
        "# A client id belongs to its user: mosquitto replaces whatever id a client sends by",
        "# its username, so no role can connect as `engine` or `shoe-1`, throw the real one",
        "# off, or inherit its persistent session and queued messages.  (One connection per",
        "# role at a time; `%c` in the ACL is the username.)",
        "use_username_as_clientid true",
        f"password_file {files.password_file}",
        f"acl_file {files.acl_file}",
        "",
        "# No packet larger than the wire contract's largest message (engine/wire.py",
        "# MAX_PAYLOAD_BYTES, plus room for the topic and headers): a bigger one is refused",
        "# by the broker and its sender disconnected, before it reaches anyone.",
        f"max_packet_size {MAX_PACKET_BYTES}",
        "",
        "# Small messages must not wait for Nagle's algorithm: a card drawn should reach",
        "# the engine and the console in milliseconds.",
        "set_tcp_nodelay true",
        "",
        "# mosquitto's default (1000) silently drops QoS 1 messages to a client whose queue",
        "# is full while the publisher still gets its PUBACK.  100000 is over an hour of a",
        "# whole table's traffic (< 20 msg/s), so the engine (persistent session) can restart",
        "# or stall without losing a card; a client further behind than that is dead, and the",
        "# engine's sequence-gap check would prompt the dealer.  Bytes are not capped so the",
        "# message limit is the one that decides.",
        f"max_queued_messages {MAX_QUEUED_MESSAGES}",
        "max_queued_bytes 0",
        "queue_qos0_messages false",
        "max_inflight_messages 20",
        "",
        "# Retained availability/state and queued QoS 1 messages of persistent sessions",
        "# survive a broker restart.  The event store, not the broker, is the record of",
        "# truth; this only narrows the window a restart could lose.",
        "persistence true",
        f"persistence_location {data_dir}/",
        "autosave_interval 10",
        "persistent_client_expiration 7d",
        "",
        "connection_messages true",
    ]
    if log_file is not None:
        lines.append(f"log_dest file {log_file}")
    else:
        lines.append("log_dest stderr")
    lines += ["log_type error", "log_type warning", "log_type notice", "log_type information"]
    if run_as:
        lines += [
            "",
            "# The account mosquitto drops to when started as root (must read the files above).",
            f"user {run_as}",
        ]
    return "\n".join(lines) + "\n"


def write_config(
    out: str | Path,
    *,
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    table: str = "+",
    data_dir: str | Path | None = None,
    run_as: str | None = None,
    log_file: str | Path | None = None,
    passwords: Mapping[Role, str] | None = None,
) -> BrokerFiles:
    """Write the broker files into ``out`` (created if needed) and return where they are.

    ``table`` limits every rule to one table id (``+``: any table on this broker).
    ``passwords`` fixes some roles' passwords; other roles keep the password already in
    ``credentials.json`` or get a new random one.
    """
    directory = Path(out).resolve()
    directory.mkdir(parents=True, exist_ok=True)
    data = Path(data_dir).resolve() if data_dir is not None else directory / "data"
    data.mkdir(parents=True, exist_ok=True)

    existing, existing_devices = _load_credentials(directory / "credentials.json")
    creds: dict[Role, tuple[str, str]] = {}
    for role in Role:
        given = (passwords or {}).get(role)
        if given is not None:
            creds[role] = (str(role), given)
        elif role in existing:
            creds[role] = existing[role]
        else:
            creds[role] = (str(role), secrets.token_urlsafe(24))
    usernames = {role: user for role, (user, _) in creds.items()}
    role_users = set(usernames.values())
    # Each device user its own password (kept across runs); never the role's.
    devices = {user: existing_devices.get(user) or secrets.token_urlsafe(24)
               for user in broker_users(usernames) if user not in role_users}
    files = BrokerFiles(directory, host, port, table, creds, devices)

    acl = build_acl(table, usernames)
    passwords_by_user = {user: devices[user] if user in devices else creds[role][1]
                         for user, role in broker_users(usernames).items()}
    # mosquitto 2 reads the password and ACL files after it has dropped from root to its own
    # account (``user``; default ``mosquitto``), so those files (and the persistence folder)
    # belong to that account when we run as root; else to whoever runs mosquitto (us).
    owner = _broker_account(run_as)
    _write(files.acl_file, render_acl(acl), 0o640, owner)
    _write(
        files.password_file,
        render_password_file({user: hash_password(pw) for user, pw in passwords_by_user.items()}),
        0o600,
        owner,
    )
    if owner is not None:
        os.chown(data, *owner)
        os.chmod(data, 0o700)
    _write(
        files.credentials_file,
        json.dumps(
            {**{str(role): {"username": user, "password": pw} for role, (user, pw) in creds.items()},
             "devices": devices},
            indent=2,
        )
        + "\n",
        0o600,
    )
    _write(
        files.mosquitto_conf,
        render_mosquitto_conf(
            files, data_dir=data, run_as=run_as, log_file=Path(log_file).resolve() if log_file else None
        ),
        0o644,
    )
    _write(
        directory / "studtable-broker.json",
        json.dumps({"host": host, "port": port, "table": table}, indent=2) + "\n",
        0o644,
    )
    return files


def write_login(files: BrokerFiles, role: Role | str, device: str, owner: tuple[int, int] | None = None) -> Path:
    """``logins/DEVICE.json``: the one login a service needs, mode 0600 (systemd hands it to the
    service with ``LoadCredential=``, so no service reads another's password)."""
    user, password = files.login(role, device)
    files.logins_dir.mkdir(mode=0o700, exist_ok=True)
    path = files.logins_dir / f"{device}.json"
    _write(path, json.dumps({"role": str(Role(role)), "device": device, "username": user, "password": password},
                            indent=2) + "\n", 0o600, owner)
    return path


def read_login(path: str | Path) -> tuple[str, str]:
    """``(username, password)`` from a ``write_login`` file."""
    doc = json.loads(Path(path).read_text("utf-8"))
    return str(doc["username"]), str(doc["password"])


def _broker_account(run_as: str | None) -> tuple[int, int] | None:
    """(uid, gid) mosquitto runs as after it starts as root, if we are root and it differs from us."""
    if os.geteuid() != 0:
        return None
    import pwd

    name = run_as or "mosquitto"
    try:
        entry = pwd.getpwnam(name)
    except KeyError:
        if run_as:
            raise ValueError(f"--run-as {run_as}: no such account on this machine") from None
        return None  # no mosquitto account: mosquitto then stays root
    if entry.pw_uid == 0:
        return None
    return entry.pw_uid, entry.pw_gid


def _write(path: Path, text: str, mode: int, owner: tuple[int, int] | None = None) -> None:
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)
    if owner is not None:
        os.chown(tmp, *owner)
    os.chmod(tmp, mode)
    os.replace(tmp, path)
