"""The embedded broker: amqtt in-process, bound to loopback, with the generated users and rules.

amqtt speaks MQTT 3.1.1 only and must be built inside a running event loop
(it captures the loop in its constructor).  ``serve`` does that for a caller
that already runs asyncio; ``start_embedded_broker`` runs its own loop on a
daemon thread for callers that do not (the one-command demo, the tests) and
returns once the listener accepts connections, or raises with amqtt's reason.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
import socket
import tempfile
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from engine.broker.acl import broker_users
from engine.broker.config import BrokerFiles, load_files, write_config
from engine.wire import Role

log = logging.getLogger(__name__)


class BrokerStartError(RuntimeError):
    """The embedded broker could not start; the message says why and what to try."""


def _check_loopback(host: str, allow_remote: bool) -> None:
    if allow_remote:
        return
    try:
        loopback = ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = host == "localhost"
    if not loopback:
        raise BrokerStartError(
            f"refusing to bind the embedded broker to {host}: it is for one machine; bind "
            "127.0.0.1, or deploy mosquitto with `studtable broker config` for a network"
        )


def amqtt_config(files: BrokerFiles, host: str, port: int) -> dict[str, Any]:
    """The amqtt configuration dict: one TCP listener and the studtable auth/ACL plugins."""
    plugins = "engine.broker.amqtt_plugins"
    return {
        "listeners": {"default": {"type": "tcp", "bind": f"{host}:{port}", "max_connections": 0}},
        "timeout_disconnect_delay": 0,
        "plugins": {
            f"{plugins}.StudtableAuthPlugin": {
                "password_file": str(files.password_file),
                "acl_file": str(files.acl_file),
                "roles": {
                    user: str(role)
                    for user, role in broker_users({r: u for r, (u, _) in files.credentials.items()}).items()
                },
            },
            f"{plugins}.StudtableAclPlugin": {"acl_file": str(files.acl_file)},
        },
    }


def _checked_broker_class() -> Any:
    """amqtt's Broker with retained-message delivery that respects the ACL.

    amqtt 0.12 sends retained messages to a client (a) when it subscribes and (b) at
    every connect, for the filters of *every* session on the broker, not only the
    client's own, and in neither case asks the topic plugins.  So a retained message
    on a secret topic would reach any client that connects while the engine is
    subscribed.  This override delivers a retained message only on the client's own
    subscription and only if the ACL lets that client receive the topic.  The secrecy
    tests fail if a future amqtt changes the internals this relies on.
    """
    from amqtt.broker import Broker
    from amqtt.contexts import Action

    for name in (
        "_publish_retained_messages_for_subscription",
        "_run_broadcast",
        "_retain_broadcast_message",
        "_get_handler",
        "_matches",
        "_topic_filtering",
        "_initialize_client_session",
        "_delete_session",
    ):
        if not hasattr(Broker, name):
            raise BrokerStartError(f"this amqtt version lacks Broker.{name}; studtable needs amqtt 0.12.x")

    class CheckedBroker(Broker):  # type: ignore[misc]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.studtable_writers: set[Any] = set()
            self._studtable_acl: Any = False  # not looked up yet

        async def _topic_filtering(self, session: Any, topic: str, action: Any) -> bool:
            # amqtt asks its topic plugins through a task per plugin and a gather, for every
            # publish and for every subscriber of every message: several turns of the event
            # loop each time.  When the studtable ACL plugin is the only one (our config), ask
            # it directly: the same verdict, no task.
            acl = self._studtable_acl
            if acl is False:
                from engine.broker.amqtt_plugins import StudtableAclPlugin

                plugins = list(getattr(self.plugins_manager, "_topic_plugins", None) or [])
                acl = plugins[0] if len(plugins) == 1 and isinstance(plugins[0], StudtableAclPlugin) else None
                self._studtable_acl = acl
            if acl is None:
                return bool(await super()._topic_filtering(session, topic, action))
            return bool(acl.verdict(session, topic, action))

        async def _initialize_client_session(
            self, reader: Any, writer: Any, remote_address: str, remote_port: int
        ) -> tuple[Any, Any]:
            # amqtt 0.12 deletes (clean session) or takes over (persistent session) the session
            # of the CONNECT's client id here, and only afterwards asks the auth plugins; a
            # connected client with that id is then thrown off even if the login fails.  So the
            # login and the client id's owner are checked first, and a refused CONNECT touches
            # nothing.  The rest is amqtt 0.12's own code.
            from amqtt.errors import AMQTTError, MQTTError, NoDataError
            from amqtt.mqtt.connack import NOT_AUTHORIZED, ConnackPacket
            from amqtt.mqtt.protocol.broker_handler import BrokerProtocolHandler
            from amqtt.utils import gen_client_id

            from engine.broker.amqtt_plugins import StudtableAuthPlugin

            try:
                handler, client_session = await BrokerProtocolHandler.init_from_connect(
                    reader, writer, self.plugins_manager
                )
            except (AMQTTError, NoDataError) as exc:
                raise AMQTTError(exc) from exc
            except MQTTError:
                with contextlib.suppress(Exception):
                    await writer.close()
                raise
            auth = [p for p in getattr(self.plugins_manager, "_auth_plugins", []) if isinstance(p, StudtableAuthPlugin)]
            for plugin in auth:
                why = plugin.refusal(client_session)
                if why is not None:
                    log.warning("embedded broker: %s", why)
                    with contextlib.suppress(Exception):
                        await ConnackPacket.build(0, NOT_AUTHORIZED).to_stream(writer)
                        await writer.close()
                    raise MQTTError(why)
            if client_session.clean_session:
                if client_session.client_id:
                    await self._delete_session(client_session.client_id)
                else:
                    client_session.client_id = gen_client_id()
                client_session.parent = 0
            elif client_session.client_id in self._sessions:
                existing, _ = self._sessions[client_session.client_id]
                for name in ("will_flag", "will_message", "will_topic", "will_qos", "keep_alive", "username",
                             "password"):
                    setattr(existing, name, getattr(client_session, name))
                client_session = existing
                client_session.parent = 1
            else:
                client_session.parent = 0
            delay = self.config.get("timeout-disconnect-delay", 0)
            if client_session.keep_alive > 0 and isinstance(delay, int):
                client_session.keep_alive += delay
            return handler, client_session

        async def stream_connected(self, reader: Any, writer: Any, listener_name: str) -> None:
            # Remember every client connection so that a stop can always drop them.
            self.studtable_writers.add(writer)
            try:
                await super().stream_connected(reader, writer, listener_name)
            finally:
                self.studtable_writers.discard(writer)

        async def _run_broadcast(self, running_tasks: Any) -> None:
            # amqtt 0.12 iterates self._subscriptions while awaiting the ACL check, so a client
            # (re)subscribing at that moment raises "dictionary changed size during iteration"
            # and the message is dropped ("1 messages not broadcasted").  Same logic over a copy.
            from amqtt.mqtt.constants import QOS_1, QOS_2

            broadcast = await self._broadcast_queue.get()
            for k_filter, subscriptions in list(self._subscriptions.items()):
                if not self._matches(broadcast["topic"], k_filter):
                    continue
                for target_session, sub_qos in list(subscriptions):
                    qos = broadcast.get("qos", sub_qos)
                    if not await self._topic_filtering(target_session, topic=broadcast["topic"], action=Action.RECEIVE):
                        continue
                    state = target_session.transitions.state
                    if (state != "connected" and not target_session.clean_session and qos in (QOS_1, QOS_2)
                            and not target_session.is_anonymous):
                        await self._retain_broadcast_message(broadcast, qos, target_session)
                        continue
                    if state != "connected":
                        continue
                    handler = self._get_handler(target_session)
                    if handler:
                        running_tasks.append(asyncio.ensure_future(
                            handler.mqtt_publish(broadcast["topic"], broadcast["data"], qos, retain=False)
                        ))

        async def _publish_retained_messages_for_subscription(
            self, subscription: tuple[str, int], session: Any
        ) -> None:
            topic_filter, _ = subscription
            own = [
                q for s, q in self._subscriptions.get(topic_filter, []) if s.client_id == session.client_id
            ]
            if not own:
                return
            handler = self._get_handler(session)
            if handler is None:
                return
            tasks = []
            for name, retained in list(self._retained_messages.items()):
                if not self._matches(name, topic_filter):
                    continue
                if not await self._topic_filtering(session, name, Action.RECEIVE):
                    continue
                qos = min(own[0], retained.qos if retained.qos is not None else own[0])
                tasks.append(
                    asyncio.ensure_future(handler.mqtt_publish(name, retained.data, qos, retain=True))
                )
            if tasks:
                await asyncio.wait(tasks)

    return CheckedBroker


async def shutdown(broker: Any, timeout: float = 3.0) -> None:
    """Stop an amqtt broker so that its clients see the connection drop, even if amqtt stalls.

    amqtt 0.12's ``shutdown`` sometimes waits for ever on a session's handler (seen with a
    persistent session and queued messages); a broker that will not stop would hang the
    demo and the tests.  So: close the listeners, ask nicely for ``timeout`` seconds, then
    abort every client connection.

    The listeners close first: amqtt closes them last, after dropping every session, and a
    client that reconnects at once lands on the dying broker, whose Will then says the device
    went offline (a shoe "offline" prompt on a mere broker restart, seen in CI).
    """
    for server in list(getattr(broker, "_servers", {}).values()):
        instance = getattr(server, "instance", None)
        if instance is not None:
            instance.close()
    try:
        await asyncio.wait_for(broker.shutdown(), timeout)
    except Exception as exc:  # includes TimeoutError
        log.warning("amqtt did not shut down cleanly (%r); dropping its connections", exc)
    for writer in list(getattr(broker, "studtable_writers", ())):
        with contextlib.suppress(Exception):
            writer.transport.abort()


async def serve(
    files: BrokerFiles, host: str = "127.0.0.1", port: int | None = None, *, allow_remote: bool = False
) -> Any:
    """Start an amqtt broker in the running loop and return it (call ``await broker.shutdown()``)."""
    _check_loopback(host, allow_remote)
    port = files.port if port is None else port
    check_files(files)
    _check_port_free(host, port)
    try:
        broker = _checked_broker_class()(amqtt_config(files, host, port))
    except Exception as exc:  # amqtt's bare PluginInitError: say which file and why
        cause = exc.__cause__ or exc
        raise BrokerStartError(f"the embedded broker could not load its users and rules from "
                               f"{files.directory}: {cause}; regenerate them: studtable broker config "
                               f"--out {files.directory}") from exc
    try:
        await broker.start()
    except Exception as exc:
        raise BrokerStartError(
            f"amqtt could not listen on {host}:{port}: {exc}; is another broker using the "
            f"port? (`ss -ltnp | grep {port}`)"
        ) from exc
    return broker


def _check_port_free(host: str, port: int) -> None:
    """Say plainly that the port is taken (amqtt would log a traceback first)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            raise BrokerStartError(
                f"cannot listen on {host}:{port} ({exc.strerror}); is another broker using the port? "
                f"(`ss -ltnp | grep {port}`) Stop it or choose another port"
            ) from None


def check_files(files: BrokerFiles) -> None:
    """The password and ACL files parse (amqtt would only say ``PluginInitError``)."""
    from engine.broker.acl import AclSyntaxError, parse_acl
    from engine.broker.passwd import PasswordFileError, parse_password_file
    from engine.configfile import ConfigFileError

    fix = f"regenerate it: studtable broker config --out {files.directory} (the passwords are kept)"
    for path, parse, error in ((files.password_file, parse_password_file, PasswordFileError),
                               (files.acl_file, parse_acl, AclSyntaxError)):
        try:
            parse(path.read_text("utf-8"))
        except FileNotFoundError:
            raise ConfigFileError(path, None, "does not exist", fix) from None
        except PermissionError:
            raise ConfigFileError(path, None, "cannot be read (permission denied)",
                                  "run the broker as a user that may read it") from None
        except (error, UnicodeDecodeError, ValueError) as exc:
            raise ConfigFileError(path, None, f"is not a valid {'password' if path == files.password_file else 'ACL'} "
                                  f"file ({exc})", fix) from None


class EmbeddedBroker:
    """An amqtt broker on its own thread and event loop."""

    def __init__(self, files: BrokerFiles, host: str, port: int, *, allow_remote: bool = False) -> None:
        self.files = files
        self.host = host
        self.port = port
        self._allow_remote = allow_remote
        self._loop: asyncio.AbstractEventLoop | None = None
        self._broker: Any = None
        self._stopped: asyncio.Event | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name=f"amqtt-{port}", daemon=True)

    def login(self, role: Role | str, device: str | None = None) -> tuple[str, str]:
        return self.files.login(role, device)

    def start(self, timeout: float = 10.0) -> EmbeddedBroker:
        self._thread.start()
        if not self._ready.wait(timeout):
            raise BrokerStartError(f"the embedded broker did not start within {timeout} s")
        if self._error is not None:
            raise self._error
        return self

    def _run(self) -> None:
        asyncio.run(self._main())

    async def _main(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stopped = asyncio.Event()
        try:
            self._broker = await serve(self.files, self.host, self.port, allow_remote=self._allow_remote)
        except BaseException as exc:
            self._error = exc
            self._ready.set()
            return
        self._ready.set()
        await self._stopped.wait()
        await shutdown(self._broker)

    def stop(self, timeout: float = 10.0) -> None:
        """Shut the broker down (clients see the connection drop) and join its thread."""
        if self._loop is not None and self._stopped is not None and self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._stopped.set)
        self._thread.join(timeout)

    def __enter__(self) -> EmbeddedBroker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


class RestartableBroker:
    """The embedded broker on a fixed port with its generated files, stopped and started again
    as one thing (the demo's broker-restart drill and the tests use it).  amqtt keeps no state
    across a restart."""

    kind = "amqtt"

    def __init__(self, files: BrokerFiles) -> None:
        self.files = files
        self.host = files.host
        self.port = files.port
        self._broker: EmbeddedBroker | None = None

    def login(self, role: Role | str, device: str | None = None) -> tuple[str, str]:
        return self.files.login(role, device)

    def start(self) -> RestartableBroker:
        self._broker = EmbeddedBroker(self.files, self.host, self.port).start()
        return self

    def stop(self) -> None:
        if self._broker is not None:
            self._broker.stop()
            self._broker = None

    def restart(self, down: float = 0.0) -> RestartableBroker:
        self.stop()
        time.sleep(down)
        return self.start()


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        port: int = sock.getsockname()[1]
        return port


def start_embedded_broker(
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    config_dir: str | Path | None = None,
    passwords: Mapping[Role, str] | None = None,
    table: str = "+",
    allow_remote: bool = False,
) -> EmbeddedBroker:
    """Start amqtt on a thread with the studtable users and rules; return once it listens.

    ``config_dir`` is a directory from ``studtable broker config`` (its passwords are
    used); without one, a fresh config is generated in a temporary directory, with
    ``passwords`` for the roles given and random ones for the rest (see ``.files``).
    ``port=0`` picks a free port (see ``.port``).
    """
    if port == 0:
        port = free_port(host)
    if config_dir is not None:
        files = load_files(config_dir)
    else:
        files = write_config(
            tempfile.mkdtemp(prefix="studtable-broker-"),
            host=host,
            port=port,
            table=table,
            passwords=passwords,
        )
    return EmbeddedBroker(files, host, port, allow_remote=allow_remote).start()
