"""Password hashes in mosquitto's ``$7$`` format (PBKDF2-HMAC-SHA512), made and checked in Python.

mosquitto 2.x stores ``user:$7$<iterations>$<base64 salt>$<base64 hash>``
(12-byte salt, 64-byte SHA-512 PBKDF2 output).  Producing it here means the
configuration can be generated on a machine without ``mosquitto_passwd``, and
the embedded amqtt broker verifies logins against the very same file, so one
password file serves both brokers.

The passwords studtable generates are random 32-character tokens (about 190
bits), so the iteration count is not what protects them; 1000 keeps a login
cheap on a small table computer while staying above mosquitto's default.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
from collections.abc import Mapping
from typing import Final

PBKDF2_ITERATIONS: Final = 1000
SALT_BYTES: Final = 12


class PasswordFileError(ValueError):
    """A password file line that is not ``user:$7$...``."""


def hash_password(password: str, *, salt: bytes | None = None, iterations: int = PBKDF2_ITERATIONS) -> str:
    """The ``$7$`` hash of ``password`` (a fresh random salt unless one is given, for tests)."""
    salt = os.urandom(SALT_BYTES) if salt is None else salt
    digest = hashlib.pbkdf2_hmac("sha512", password.encode("utf-8"), salt, iterations)
    return f"$7${iterations}${base64.b64encode(salt).decode()}${base64.b64encode(digest).decode()}"


def verify_password(password: str, hashed: str) -> bool:
    """True if ``password`` matches a ``$7$`` hash; False for any other or malformed hash."""
    parts = hashed.split("$")
    if len(parts) != 5 or parts[0] != "" or parts[1] != "7":
        return False
    try:
        iterations = int(parts[2])
        salt = base64.b64decode(parts[3], validate=True)
        expected = base64.b64decode(parts[4], validate=True)
    except ValueError:
        return False
    if not 1 <= iterations <= 10_000_000:
        return False
    digest = hashlib.pbkdf2_hmac("sha512", password.encode("utf-8"), salt, iterations)
    return hmac.compare_digest(digest, expected)


def render_password_file(hashes: Mapping[str, str]) -> str:
    return "".join(f"{user}:{hashed}\n" for user, hashed in hashes.items())


def parse_password_file(text: str) -> dict[str, str]:
    users: dict[str, str] = {}
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        user, sep, hashed = line.partition(":")
        if not sep or not user or not hashed.startswith("$7$"):
            raise PasswordFileError(
                f"password file line {number}: expected 'user:$7$...' (mosquitto 2 format)"
            )
        users[user] = hashed
    return users
