"""amqtt plugins that enforce the generated password file and ACL in the embedded broker.

amqtt's own ``FileAuthPlugin`` wants Argon2 or sha512-crypt hashes and its
``TopicAccessControlListPlugin`` has no per-client patterns and, when it grants
a subscription, amqtt sends retained messages without asking it again.  These
two read the files ``studtable broker config`` writes for mosquitto, so both
brokers share one set of users and one set of rules (``engine.broker.acl``).

amqtt also publishes a client's Will without a publish check, so the auth
plugin refuses a connection whose Will topic the user may not write: otherwise
a console could leave a forged ``sensor/shoe`` message as its Will.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from amqtt.contexts import Action
from amqtt.plugins.base import BaseAuthPlugin, BaseTopicPlugin

from engine.broker.acl import parse_acl
from engine.broker.passwd import parse_password_file, verify_password


class StudtableAuthPlugin(BaseAuthPlugin):  # type: ignore[misc]  # amqtt is untyped here
    """Log in against the mosquitto-format ``$7$`` password file; no anonymous clients."""

    @dataclass
    class Config:
        password_file: str = ""
        acl_file: str = ""

    def __init__(self, context: Any) -> None:
        super().__init__(context)
        self._users = parse_password_file(Path(self.config.password_file).read_text("utf-8"))
        self._acl = parse_acl(Path(self.config.acl_file).read_text("utf-8"))

    async def authenticate(self, *, session: Any) -> bool | None:
        username = getattr(session, "username", None)
        hashed = self._users.get(username or "")
        if not username or hashed is None or not verify_password(session.password or "", hashed):
            self.context.logger.info(f"login refused for user {username!r}: unknown user or wrong password")
            return False
        if getattr(session, "will_flag", False):
            will_topic = session.will_topic or ""
            if not self._acl.may_publish(username, session.client_id, will_topic):
                self.context.logger.info(
                    f"login refused for {username!r}: Will topic {will_topic!r} not writable"
                )
                return False
        return True


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
            return self._acl.may_publish(user, client, topic)
        if action == Action.SUBSCRIBE:
            return self._acl.may_subscribe(user, client, topic)
        if action == Action.RECEIVE:
            return self._acl.may_receive(user, client, topic)
        return False


#: Remembered ACL verdicts; a broker with more distinct (user, client, topic) triples starts over.
_VERDICTS_KEPT = 10_000
