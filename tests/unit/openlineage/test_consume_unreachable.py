"""`openlineage consume` against a broker that is not there (issue 39 item 13).

It wrote 766 lines in 20 s and never exited: librdkafka's raw `%3|...|FAIL|` line and our warning for
every reconnect attempt. Now each error is one line until Kafka answers again, librdkafka's own lines
go to the debug log, and `--startup-timeout` ends a start that reaches no broker with an error.
A port bound to a socket that does not listen refuses connections: nothing runs there.
"""

from __future__ import annotations

import logging
import os
import re
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from atlas_sync.openlineage_server.consumer import ConsumerConfig, KafkaLineageConsumer

pytest.importorskip("confluent_kafka")


@pytest.fixture()
def refused_port() -> Iterator[int]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))  # bound, never listening: connections are refused
        yield sock.getsockname()[1]


def test_consume_exits_with_an_error_after_the_startup_timeout(refused_port: int, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ATLAS_")}
    env["ATLAS_SYNC_DATA_DIR"] = str(tmp_path / "data")
    args = ["openlineage", "consume", "--bootstrap-servers", f"127.0.0.1:{refused_port}", "--topic", "ol"]
    proc = subprocess.run(
        [sys.executable, "-m", "atlas_sync.cli.main", *args, "-d", "demo", "--startup-timeout", "2"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,  # the test's own limit: the command must exit by itself
    )
    assert proc.returncode == 1
    lines = proc.stderr.splitlines()
    assert lines[0].startswith(f"consuming ol from 127.0.0.1:{refused_port} ")
    assert not [line for line in lines if line.startswith("%")], "librdkafka's own lines"
    warnings = [line for line in lines if line.startswith("WARNING: kafka: ")]
    assert len(warnings) == len(set(warnings)) <= 3, warnings
    assert any("Connection refused" in w for w in warnings)
    # (librdkafka's own words end the line: "... Connection refused (after N ms in state CONNECT)")
    assert lines[-2].startswith(
        f"error: no Kafka broker answered at 127.0.0.1:{refused_port} within 2 s (127.0.0.1:{refused_port}"
        f"/bootstrap: Connect to ipv4#127.0.0.1:{refused_port} failed: Connection refused"
    ), lines
    assert lines[-1].startswith("hint: check --bootstrap-servers")
    assert len(lines) <= 6, lines


def test_a_waiting_consumer_says_each_error_once_until_kafka_answers(
    refused_port: int, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    config = ConsumerConfig(
        f"127.0.0.1:{refused_port}", ("ol",), dead_letter_path=tmp_path / "dead.jsonl", poll_timeout=0.05
    )
    reported: list[str] = []
    enough = threading.Event()

    class Counted(KafkaLineageConsumer):
        def _on_error(self, err: Any) -> None:
            reported.append(err.str())
            super()._on_error(err)
            if len(reported) >= 30:  # librdkafka reports the refused connection at every attempt
                enough.set()

    worker = Counted(lambda graph, job: None, config)
    caplog.set_level(logging.DEBUG, logger="atlas_sync.openlineage_server.consumer")
    thread = threading.Thread(target=worker.run, daemon=True)
    thread.start()
    try:
        assert enough.wait(60), reported
    finally:
        worker.stop()
        thread.join(60)
    assert not thread.is_alive()
    said = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    # one line per distinct error, not per attempt (librdkafka's "after N ms" does not make one)
    distinct = {re.sub(r" \(after \d+ms in state [A-Z_]+\)", "", r) for r in reported}
    assert len(said) == len(distinct) < 5, said
    assert all(s.startswith("kafka: ") for s in said)
    # librdkafka's own lines went to the debug log, not to stderr
    assert any(
        r.getMessage().startswith("librdkafka: ") for r in caplog.records if r.levelno == logging.DEBUG
    )
    # Kafka answering makes the next error news again
    worker._kafka_ok()
    worker._on_error(_Err(reported[0]))
    said = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert said[-2:] == ["kafka: reachable again", f"kafka: {reported[0]}"]


class _Err:
    def __init__(self, text: str) -> None:
        self.text = text

    def str(self) -> str:
        return self.text


def test_an_error_repeated_with_other_timing_words_is_said_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    config = ConsumerConfig("127.0.0.1:9", ("ol",), dead_letter_path=tmp_path / "dead.jsonl")
    worker = KafkaLineageConsumer(lambda graph, job: None, config)
    caplog.set_level(logging.WARNING, logger="atlas_sync.openlineage_server.consumer")
    refused = "127.0.0.1:9/bootstrap: Connect to ipv4#127.0.0.1:9 failed: Connection refused"
    for ms in (0, 2, 0, 13):
        worker._on_error(_Err(f"{refused} (after {ms}ms in state CONNECT)"))
    said = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert said == [f"kafka: {refused} (after 0ms in state CONNECT)"]
