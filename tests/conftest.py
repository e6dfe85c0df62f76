"""Fixtures every test area shares: real brokers (mosquitto, amqtt) and PostgreSQL."""

pytest_plugins = ["tests.support.fixtures"]
