"""Webhooks from Python: a handler tested against localgate's deliveries, and the client's calls for events and webhooks."""

import datetime
import os

import pytest

from localgate_testing import LocalgateError, start_receiver

COMPLETED = "00000000-0000-4000-9000-000000000002"
SETTLED = datetime.datetime(2030, 1, 3, tzinfo=datetime.timezone.utc)

# A server in a container cannot reach a receiver on this host's loopback: its webhook tests run where it can.
pytestmark = pytest.mark.skipif(os.environ.get("LOCALGATE_RECEIVER_UNREACHABLE") == "1", reason="the server cannot reach this host's loopback receiver")


@pytest.mark.localgate(seed="none", pay=True, ids="sequential", clock="2030-01-01T00:00:00.000Z")
def test_a_settled_transfer_is_credited_once_though_its_webhook_came_twice(localgate_instance, localgate_receiver):
    # The handler under test: credits the amount of each completed transaction once, keyed by the event's id.
    credits = {}
    runs = []

    def handle(delivery):
        runs.append(delivery.webhook_id)
        event = delivery.event
        if delivery.verified and event["type"] == "pay.transaction.completed" and event["id"] not in credits:
            credits[event["id"]] = event["data"]["amount"]

    (endpoint,) = localgate_instance.set_webhooks([{"url": localgate_receiver.url, "secret": localgate_receiver.secret, "types": ["pay.transaction.completed"]}])
    # The first delivery of the completion reaches the receiver, but its answer is lost: localgate sends it again.
    (rule,) = localgate_instance.faults.set([{"direction": "outbound", "event": "pay.transaction.completed", "drop": "after", "times": 1}])["rules"]

    made = localgate_instance.post("/v1/pay/gateway/deposit", {"provider_id": "bank-transfer", "asset": "USD", "amount": 10000},
                                   subject="alice", headers={"Idempotency-Key": "deposit-1"})
    assert made.status == 201, made

    # Two days settle the transfer and send its completion; the retry is due 5 s later.
    assert localgate_instance.move_clock(advance="2d") == {"applied": {"pay.transaction.completed": 1}, "attempted": 1, "remaining": 0}
    assert localgate_instance.advance_clock("5s") == {}

    for delivery in localgate_receiver.wait_for(2):
        handle(delivery)

    first, second = localgate_receiver.deliveries
    assert (first.verified, second.verified) == (True, True)
    assert first.webhook_id == second.webhook_id
    assert (first.event["id"], second.event["id"]) == (COMPLETED, COMPLETED)
    assert len(runs) == 2
    assert credits == {COMPLETED: 10000}

    # What localgate says it did: the first attempt answered but dropped by the rule, the second delivered.
    attempts = localgate_instance.deliveries({"type": "pay.transaction.completed"})
    assert [(a["attempt"], a["status"], a["fault"], a["endpoint_id"]) for a in attempts] == [(1, 204, rule["id"], endpoint["id"]), (2, 204, None, endpoint["id"])]
    assert localgate_instance.count_deliveries({"status": 204}) == 2
    assert [(e["id"], e["type"]) for e in localgate_instance.events(type="pay.*")] == [
        ("00000000-0000-4000-9000-000000000001", "pay.transaction.created"),
        (COMPLETED, "pay.transaction.completed"),
    ]


@pytest.mark.localgate(seed="none", pay=True, ids="sequential", clock="2030-01-01T00:00:00.000Z")
def test_endpoints_events_and_deliveries_are_read_flushed_and_cleared(localgate_instance, localgate_receiver):
    (endpoint,) = localgate_instance.set_webhooks([{"url": localgate_receiver.url, "types": ["pay.transaction.completed"], "signing_clock": "instance"}])
    assert endpoint["secret"].startswith("whsec_")
    assert (endpoint["types"], endpoint["signing_clock"], endpoint["retry_schedule"]) == (["pay.transaction.completed"], "instance", ["5s", "5m", "30m", "2h", "5h", "10h", "10h"])

    for key in ("transfer-1", "transfer-2", "transfer-3"):
        made = localgate_instance.post("/v1/pay/gateway/deposit", {"provider_id": "bank-transfer", "asset": "USD", "amount": 100},
                                       subject="alice", headers={"Idempotency-Key": key})
        assert made.status == 201, made
    assert localgate_instance.move_clock(advance="2d") == {"applied": {"pay.transaction.completed": 3}, "attempted": 3, "remaining": 0}
    assert localgate_instance.flush_webhooks() == 0

    events = localgate_instance.events()
    assert [e["type"] for e in events] == ["pay.transaction.created"] * 3 + ["pay.transaction.completed"] * 3
    assert localgate_instance.events(after=events[1]["id"], limit=2) == events[2:4]
    assert localgate_instance.events(type="pay.transaction.completed") == events[3:]
    with pytest.raises(LocalgateError) as refused:
        localgate_instance.events(after="00000000-0000-4000-9000-0000000000ff")
    assert (refused.value.status, refused.value.code) == (422, "event_not_found")

    # Signed on the instance's clock: checked against it, the timestamps hold; the receiver's secret is not the
    # endpoint's (it was minted), so no signature does.
    received = localgate_receiver.wait_for(3)
    assert [d.headers["webhook-timestamp"] for d in received] == [str(int(SETTLED.timestamp()))] * 3
    assert [(d.verified, d.failure) for d in received] == [(False, "Message timestamp too new")] * 3
    localgate_receiver.now = lambda: SETTLED
    assert [localgate_receiver.verify(d.headers, d.body) for d in received] == ["No matching signature found"] * 3
    localgate_receiver.secret = endpoint["secret"]
    assert [localgate_receiver.verify(d.headers, d.body) for d in received] == [None] * 3
    (read,) = localgate_instance.webhooks()
    assert (read["secret"], read["delivered"], read["failed"]) == ("whsec_********", 3, 0)
    assert localgate_instance.count_deliveries() == 3
    localgate_instance.clear_deliveries()
    assert localgate_instance.deliveries() == []

    localgate_instance.clear_webhooks()
    assert localgate_instance.webhooks() == []
    assert localgate_instance.flush_webhooks() == 0
    with pytest.raises(ValueError):
        localgate_instance.move_clock()
    assert localgate_instance.move_clock(now="2030-01-02T00:00:00.000Z") == {"applied": {}, "attempted": 0, "remaining": 0}
    assert localgate_instance.record["clock"] == "2030-01-02T00:00:00.000Z"


@pytest.mark.localgate(seed="none", pay=True, ids="sequential", clock="2030-01-01T00:00:00.000Z")
def test_each_attempt_of_a_long_move_is_checked_against_the_instant_it_was_due(localgate_instance):
    def clock():
        """The instance's clock as read when a delivery arrives: within a move, the move's target."""
        record = localgate_instance.server.admin("GET", "/_instances/" + localgate_instance.id)
        return datetime.datetime.fromisoformat(record["clock"].replace("Z", "+00:00"))

    with start_receiver(instance=localgate_instance) as receiver, start_receiver(secret=receiver.secret, now=clock) as reading:
        localgate_instance.set_webhooks([
            {"url": r.url, "secret": receiver.secret, "types": ["pay.*"], "signing_clock": "instance", "retry_schedule": ["1d", "1d"]}
            for r in (receiver, reading)
        ])
        receiver.respond_with(500, times=2)
        reading.respond_with(500, times=2)
        made = localgate_instance.post("/v1/pay/gateway/deposit", {"provider_id": "bank-transfer", "asset": "USD", "amount": 10000},
                                       subject="alice", headers={"Idempotency-Key": "deposit-1"})
        assert made.status == 201, made
        localgate_instance.flush_webhooks()
        # Three days: the creation's retries fall due on days 1 and 2, the transfer settles on day 2.
        assert localgate_instance.move_clock(advance="3d") == {"applied": {"pay.transaction.completed": 1}, "attempted": 6, "remaining": 0}

        def seen(deliveries):
            at = lambda d: datetime.datetime.fromtimestamp(int(d.headers["webhook-timestamp"]), datetime.timezone.utc).strftime("%m-%d")
            return sorted((at(d), d.event["type"], d.verified, d.failure) for d in deliveries)

        assert seen(receiver.deliveries) == [
            ("01-01", "pay.transaction.created", True, None),
            ("01-02", "pay.transaction.created", True, None),
            ("01-03", "pay.transaction.completed", True, None),
            ("01-03", "pay.transaction.created", True, None),
        ]
        assert seen(reading.deliveries) == [
            ("01-01", "pay.transaction.created", True, None),
            ("01-02", "pay.transaction.created", False, "Message timestamp too old"),
            ("01-03", "pay.transaction.completed", False, "Message timestamp too old"),
            ("01-03", "pay.transaction.created", False, "Message timestamp too old"),
        ]
        # Checked again once every attempt was made, each holds as it did on arrival.
        assert [receiver.verify(d.headers, d.body) for d in receiver.deliveries] == [None] * 4


@pytest.mark.localgate(seed="none", pay=True, ids="sequential", clock="2030-01-01T00:00:00.000Z")
def test_every_completion_gets_through_an_outage_a_pause_and_a_secret_rotation(localgate_instance, localgate_receiver):
    (endpoint,) = localgate_instance.set_webhooks([{"url": localgate_receiver.url, "secret": localgate_receiver.secret,
                                                    "types": ["pay.transaction.completed"], "retry_schedule": ["1m"]}])

    def deposit(key):
        made = localgate_instance.post("/v1/pay/gateway/deposit", {"provider_id": "bank-transfer", "asset": "USD", "amount": 10000},
                                       subject="alice", headers={"Idempotency-Key": key})
        assert made.status == 201, made

    # The handler is down: the completion fails, its retry a minute later too, and it is given up.
    localgate_receiver.respond_with(503, times=2)
    deposit("deposit-1")
    assert localgate_instance.move_clock(advance="2d")["attempted"] == 1
    assert localgate_instance.move_clock(advance="1m")["attempted"] == 1

    # Back up, the handler asks for what it missed since the outage began.
    assert localgate_instance.recover_webhook(endpoint["id"], "2030-01-01T00:00:00Z") == 1

    # Paused while it deploys, it gets nothing; enabled, what waited arrives.
    assert localgate_instance.disable_webhook(endpoint["id"])["disabled_reason"] == "paused"
    deposit("deposit-2")
    assert localgate_instance.move_clock(advance="2d")["attempted"] == 0
    assert localgate_instance.enable_webhook(endpoint["id"])["disabled"] is False
    localgate_instance.flush_webhooks()

    # The secret is rolled: for an hour both sign, so the handler, still on the old one, verifies; so does the new one.
    rotated = localgate_instance.rotate_webhook_secret(endpoint["id"], overlap="1h")
    assert rotated["previous_secret_until"] == "2030-01-05T01:01:00.000Z"
    assert localgate_instance.resend_event(COMPLETED) == 1
    with pytest.raises(LocalgateError) as refused:
        localgate_instance.resend_event(COMPLETED, endpoint_id="we_none")
    assert (refused.value.status, refused.value.code) == (422, "endpoint_not_found")

    received = localgate_receiver.wait_for(5)
    assert [(d.verified, d.status, d.event["id"]) for d in received] == [
        (True, 503, COMPLETED), (True, 503, COMPLETED), (True, 204, COMPLETED), (True, 204, "00000000-0000-4000-9000-000000000005"), (True, 204, COMPLETED),
    ]
    assert len({d.webhook_id for d in received if d.event["id"] == COMPLETED}) == 1
    localgate_receiver.secret = rotated["secret"]
    assert localgate_receiver.verify(received[4].headers, received[4].body) is None
    assert localgate_instance.rotate_webhook_secret(endpoint["id"])["previous_secret_until"] == "2030-01-06T00:01:00.000Z"
