"""Fixtures for the bus tests: real brokers and databases from ``tests.support``."""

from tests.support.fixtures import amqtt_broker, mosquitto_broker, mqtt_broker, pg_dsn, pg_server

__all__ = ["amqtt_broker", "mosquitto_broker", "mqtt_broker", "pg_dsn", "pg_server"]
