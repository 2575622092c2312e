"""The test broker is a real Kafka: what is produced can be consumed back, with committed offsets."""

from __future__ import annotations

from confluent_kafka import Consumer, Producer


def test_a_message_produced_to_the_test_broker_is_consumed_back(
    kafka_bootstrap: str, topic_name: str
) -> None:
    producer = Producer({"bootstrap.servers": kafka_bootstrap})
    producer.produce(topic_name, key=b"k", value=b"hello")
    assert producer.flush(30) == 0
    consumer = Consumer(
        {"bootstrap.servers": kafka_bootstrap, "group.id": topic_name, "auto.offset.reset": "earliest"}
    )
    consumer.subscribe([topic_name])
    try:
        msg = None
        for _ in range(60):
            msg = consumer.poll(1.0)
            if msg is not None and msg.error() is None:
                break
        assert msg is not None and msg.error() is None
        assert (msg.key(), msg.value()) == (b"k", b"hello")
    finally:
        consumer.close()
