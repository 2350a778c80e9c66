"""The webhook receiver on its own: what it records, verifies and answers, with no localgate involved."""

import base64
import datetime
import http.client
import json
import os
import socket
import time
import urllib.parse

import pytest

from localgate_testing import start_receiver
from localgate_testing.receiver import MAX_BODY_BYTES, sign

SECRET = "whsec_" + base64.b64encode(os.urandom(24)).decode()
EVENT = {"id": "00000000-0000-4000-9000-000000000001", "type": "pay.transaction.created", "created_at": "2030-01-01T00:00:00.000Z", "data": {"id": "t1", "amount": 100}}
BODY = json.dumps(EVENT)


def signed(body=BODY, webhook_id="msg_one", at=None, secret=SECRET):
    """Headers as localgate signs a delivery."""

    at = int(time.time()) if at is None else at
    return {"content-type": "application/json", "webhook-id": webhook_id, "webhook-timestamp": str(at), "webhook-signature": sign(secret, webhook_id, at, body)}


def post(receiver, body=BODY, headers=None, path="/"):
    """POSTs to the receiver; returns the status it answered."""

    url = urllib.parse.urlsplit(receiver.url)
    connection = http.client.HTTPConnection(url.hostname, url.port, timeout=10)
    try:
        connection.request("POST", path, body=body.encode(), headers=signed(body) if headers is None else headers)
        return connection.getresponse().status
    finally:
        connection.close()


def test_records_verified_deliveries_in_arrival_order(localgate_receiver):
    assert localgate_receiver.url.startswith("http://127.0.0.1:")
    assert len(base64.b64decode(localgate_receiver.secret[len("whsec_"):])) == 32
    assert post(localgate_receiver, headers=signed(webhook_id="msg_a", secret=localgate_receiver.secret), path="/hooks?x=1") == 204
    assert post(localgate_receiver, headers=signed(webhook_id="msg_b", secret=localgate_receiver.secret)) == 204

    first, second = localgate_receiver.wait_for(2)
    assert (first.seq, first.method, first.path, first.webhook_id, first.verified, first.failure, first.status) == (1, "POST", "/hooks?x=1", "msg_a", True, None, 204)
    assert first.event == EVENT
    assert first.body == BODY
    assert first.headers["content-type"] == "application/json"
    assert first.received_at.tzinfo is datetime.timezone.utc
    assert (second.seq, second.webhook_id, second.verified) == (2, "msg_b", True)
    assert "msg_a" in repr(first)


def test_says_why_a_delivery_is_not_verified():
    now = int(time.time())
    with start_receiver(secret=SECRET) as receiver:
        post(receiver, headers=signed(secret="whsec_" + base64.b64encode(os.urandom(32)).decode()))
        post(receiver, headers={"content-type": "application/json"})
        post(receiver, headers=signed(at=now - 600))
        post(receiver, headers=signed(at=now + 600))
        post(receiver, headers={**signed(), "webhook-timestamp": "soon"})
        post(receiver, body=json.dumps({**EVENT, "data": {"amount": 1000}}), headers=signed())
        # Several signatures, as a sender rotating its secret sends them: one that matches is enough.
        both = signed()
        post(receiver, headers={**both, "webhook-signature": "v1,AAAA v1a,xyz " + both["webhook-signature"]})

        assert [(d.verified, d.failure) for d in receiver.deliveries] == [
            (False, "No matching signature found"),
            (False, "Missing required headers"),
            (False, "Message timestamp too old"),
            (False, "Message timestamp too new"),
            (False, "Invalid Signature Headers"),
            (False, "No matching signature found"),
            (True, None),
        ]


def test_checks_timestamps_against_the_clock_it_is_given():
    instant = datetime.datetime(2030, 1, 1, tzinfo=datetime.timezone.utc)
    with start_receiver(secret=SECRET, now=lambda: instant) as receiver:
        post(receiver, headers=signed(at=int(instant.timestamp()) - 60))
        post(receiver, headers=signed())
        assert [(d.verified, d.failure) for d in receiver.deliveries] == [(True, None), (False, "Message timestamp too old")]


def test_records_a_body_that_is_no_event_with_event_none():
    with start_receiver(secret=SECRET) as receiver:
        for body in ("not json", "42", '{"id": "e1"}', json.dumps({**EVENT, "data": 1})):
            post(receiver, body=body, headers=signed(body))
        assert [(d.event, d.verified) for d in receiver.deliveries] == [(None, True)] * 4


def test_answers_what_it_is_told_then_its_default():
    with start_receiver(secret=SECRET, status=200) as receiver:
        receiver.respond_with(500, times=2)
        receiver.respond_with(410)
        statuses = [post(receiver) for _ in range(5)]
        assert statuses == [500, 500, 410, 200, 200]
        assert [d.status for d in receiver.deliveries] == statuses
        for status, times in ((99, 1), (600, 1), ("500", 1), (500, 0), (500, 1.5)):
            with pytest.raises(ValueError):
                receiver.respond_with(status, times=times)


def test_waits_for_deliveries_and_says_how_many_came_when_they_do_not():
    with start_receiver(secret=SECRET) as receiver:
        post(receiver)
        assert len(receiver.wait_for(1)) == 1
        started = time.monotonic()
        with pytest.raises(AssertionError, match=r"^expected 2 webhook deliveries within 0.05s, got 1$"):
            receiver.wait_for(2, timeout=0.05)
        assert time.monotonic() - started < 1
        receiver.clear()
        assert receiver.deliveries == []
        post(receiver)
        assert receiver.deliveries[0].seq == 1


def test_answers_413_to_a_body_over_the_bound():
    with start_receiver(secret=SECRET) as receiver:
        url = urllib.parse.urlsplit(receiver.url)
        with socket.create_connection((url.hostname, url.port), timeout=10) as client:
            client.sendall(b"POST / HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-length: %d\r\n\r\n" % (MAX_BODY_BYTES + 1))
            assert client.recv(100).startswith(b"HTTP/1.1 413 ")
        (delivery,) = receiver.deliveries
        assert (delivery.body, delivery.event, delivery.verified, delivery.failure, delivery.status) == ("", None, False, "Body over 1048576 bytes", 413)


def test_refuses_a_secret_that_holds_no_key():
    for secret in ("whsec_", "whsec_not base64!"):
        with pytest.raises(ValueError):
            start_receiver(secret=secret)


def test_signs_as_the_reference_library_does():
    # The value standardwebhooks 1.1.1 (npm) gives for this secret, id, timestamp and body.
    secret = "whsec_" + base64.b64encode(b"0123456789abcdef0123456789abcdef").decode()
    assert sign(secret, "msg_x", 1893456000, '{"a":1}') == "v1,YO+4KJefm90c4mpX3Q1Ae9Ikc8vq7D40aTbfrybe7ps="


def test_says_why_when_it_cannot_read_when_an_attempt_was_due():
    class Gone:
        """An instance whose server cannot be reached."""

        def deliveries(self, pattern):
            raise ConnectionRefusedError(111, "Connection refused")

    with start_receiver(secret=SECRET, instance=Gone()) as receiver:
        post(receiver, headers=signed())
        assert [(d.verified, d.failure) for d in receiver.deliveries] == [(False, "Could not read when the attempt was due: [Errno 111] Connection refused")]
