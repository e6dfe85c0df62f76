"""Fixtures for the bus tests: real brokers and databases from ``tests.support``."""
