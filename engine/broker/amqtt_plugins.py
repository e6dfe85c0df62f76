"""amqtt plugins that enforce the generated password file and ACL in the embedded broker.

amqtt's own ``FileAuthPlugin`` wants Argon2 or sha512-crypt hashes and its
``TopicAccessControlListPlugin`` has no per-client patterns and, when it grants
a subscription, amqtt sends retained messages without asking it again.  These
two read the files ``studtable broker config`` writes for mosquitto, so both
brokers share one set of users and one set of rules (``engine.broker.acl``).

amqtt also publishes a client's Will without a publish check, so the auth
plugin refuses a connection whose Will topic the user may not write: otherwise
a console could leave a forged ``sensor/shoe`` message as its Will.

Client ids are bound to users (``engine.broker.acl.client_id_allowed``): a user may
connect only with its own name or one of its role's device ids.  amqtt looks up,
deletes or takes over the session of a client id *before* it asks the auth
plugins, so the embedded broker (``engine.broker.embedded``) calls ``refusal``
right after reading the CONNECT, before any session state is touched: a console
connecting as ``engine`` (or anyone with a wrong password) can neither throw the
engine off, nor delete its session, nor inherit its queued messages.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from amqtt.contexts import Action
from amqtt.plugins.base import BaseAuthPlugin, BaseTopicPlugin

from engine.broker.acl import client_id_allowed, parse_acl
from engine.broker.passwd import parse_password_file, verify_password
from engine.wire import CHANNELS, ROOT, Role


class StudtableAuthPlugin(BaseAuthPlugin):  # type: ignore[misc]  # amqtt is untyped here
    """Log in against the mosquitto-format ``$7$`` password file; no anonymous clients."""

    @dataclass
    class Config:
        password_file: str = ""
        acl_file: str = ""
        #: username -> role (which client ids the user may take); a user not listed may use only its name
        roles: dict[str, str] = field(default_factory=dict)

    def __init__(self, context: Any) -> None:
        super().__init__(context)
        self._users = parse_password_file(Path(self.config.password_file).read_text("utf-8"))
        self._acl = parse_acl(Path(self.config.acl_file).read_text("utf-8"))
        self._roles = {user: Role(role) for user, role in dict(self.config.roles or {}).items()}

    def refusal(self, session: Any) -> str | None:
        """Why this CONNECT is refused (None: it may log in).  Synchronous and free of side effects."""
        username = getattr(session, "username", None)
        hashed = self._users.get(username or "")
        if not username or hashed is None or not verify_password(session.password or "", hashed):
            return f"login refused for user {username!r}: unknown user or wrong password"
        client_id = str(getattr(session, "client_id", "") or "")
        role = self._roles.get(username)
        if client_id != username and (role is None or not client_id_allowed(role, username, client_id)):
            return f"login refused for {username!r}: client id {client_id!r} belongs to another role"
        if getattr(session, "will_flag", False):
            will_topic = session.will_topic or ""
            if not self._acl.may_publish(username, client_id, will_topic) or not own_device_topic(
                client_id, will_topic
            ):
                return f"login refused for {username!r}: Will topic {will_topic!r} not writable"
        return None

    async def authenticate(self, *, session: Any) -> bool | None:
        why = self.refusal(session)
        if why is not None:
            self.context.logger.info(why)
            return False
        return True


def per_device_topic(topic: str) -> str | None:
    """The device id of a per-device topic (availability, birth), else None."""
    levels = topic.split("/")
    if len(levels) == 5 and "/".join(levels[:2]) == ROOT:
        spec = next((s for c, s in CHANNELS.items() if str(c) == levels[3]), None)
        if spec is not None and spec.per_device:
            return levels[4]
    return None


def own_device_topic(client_id: str, topic: str) -> bool:
    """A per-device topic may be written only under the writer's own client id."""
    device = per_device_topic(topic)
    return device is None or device == client_id


class StudtableAclPlugin(BaseTopicPlugin):  # type: ignore[misc]
    """Publish, subscribe and delivery checks against the generated ACL file."""

    @dataclass
    class Config:
        acl_file: str = ""

    def __init__(self, context: Any) -> None:
        super().__init__(context)
        self._acl = parse_acl(Path(self.config.acl_file).read_text("utf-8"))
        # The rules are read once and never change while the broker runs, so a verdict can be
        # remembered: every message is checked once on publish and once per subscriber on
        # delivery, always for the same few (user, client, topic) triples.
        self._verdicts: dict[tuple[str, str, str, Any], bool] = {}

    async def topic_filtering(
        self, *, session: Any = None, topic: str | None = None, action: Any = None
    ) -> bool | None:
        return self.verdict(session, topic, action)

    def verdict(self, session: Any, topic: str | None, action: Any) -> bool:
        """The check itself, synchronous: the embedded broker calls it directly (see
        ``engine.broker.embedded``) instead of through amqtt's task-per-plugin dispatch."""
        if session is None or not topic:
            return False
        user, client = session.username, session.client_id
        key = (user, client, topic, action)
        verdict = self._verdicts.get(key)
        if verdict is None:
            verdict = self._check(user, client, topic, action)
            if len(self._verdicts) >= _VERDICTS_KEPT:
                self._verdicts.clear()
            self._verdicts[key] = verdict
        return verdict

    def _check(self, user: str, client: str, topic: str, action: Any) -> bool:
        if action == Action.PUBLISH:
            per_device = per_device_topic(topic)
            if per_device is not None:  # the client id is bound to the user at connect
                return per_device == client
            return self._acl.may_publish(user, client, topic)
        if action == Action.SUBSCRIBE:
            return self._acl.may_subscribe(user, client, topic)
        if action == Action.RECEIVE:
            return self._acl.may_receive(user, client, topic)
        return False


#: Remembered ACL verdicts; a broker with more distinct (user, client, topic) triples starts over.
_VERDICTS_KEPT = 10_000
