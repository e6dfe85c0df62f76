"""MQTT brokers for studtable: configuration generated from the wire contract, and the embedded broker.

``engine.broker.config.write_config``      mosquitto.conf, password file, ACL, credentials
``engine.broker.embedded.start_embedded_broker``  amqtt on a thread, same users and rules
``engine.broker.acl``                       the rules themselves (pure)
"""

from engine.broker.config import BrokerFiles, load_files, write_config

__all__ = ["BrokerFiles", "load_files", "write_config"]
