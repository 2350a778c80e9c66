"""Time from the client: an instance's clock moved through a pending payment, and the default data set's clock."""

import os
import uuid

import pytest

START = "2030-01-01T00:00:00.000Z"
DEPOSIT = {"provider_id": "bank-transfer", "asset": "USD", "amount": 10000}


def move(instance, operation, body, subject="alice"):
    """A deposit or withdrawal through the gateway, with a fresh Idempotency-Key."""

    return instance.post("/v1/pay/gateway/" + operation, body, subject=subject, headers={"Idempotency-Key": str(uuid.uuid4())})


def ledger(instance, subject="alice"):
    """What the API shows of a wallet's ledger: its balances, and its transactions newest first."""

    return instance.get("/v1/pay/wallet", subject=subject).body["balances"], instance.get("/v1/pay/wallet/transactions", subject=subject).body["data"]


@pytest.mark.localgate(seed="none", pay=True, clock=START)
def test_a_bank_transfer_deposit_is_pending_until_the_clock_passes_its_two_days(localgate_instance):
    made = move(localgate_instance, "deposit", DEPOSIT)
    assert made.status == 201, made
    pending = made.body
    assert pending == {
        "id": pending["id"], "owner_id": "alice", "type": "deposit", "asset": "USD", "amount": 10000, "provider_id": "bank-transfer",
        "status": "pending", "created_at": START, "settles_at": "2030-01-03T00:00:00.000Z", "settled_at": None, "failure_code": None,
        "metadata": {},
    }
    assert ledger(localgate_instance) == ([{"asset": "USD", "amount": 0, "pending_in": 10000, "pending_out": 0}], [pending])

    # Money on its way is not money to spend.
    refused = move(localgate_instance, "withdraw", {"provider_id": "sandbox", "asset": "USD", "amount": 1})
    assert refused.status == 409, refused
    assert refused.body["code"] == "insufficient_funds"
    assert ledger(localgate_instance) == ([{"asset": "USD", "amount": 0, "pending_in": 10000, "pending_out": 0}], [pending])

    # A day short of its settles_at, nothing moves.
    assert localgate_instance.advance_clock("1d") == {}
    assert localgate_instance.record["clock"] == "2030-01-02T00:00:00.000Z"
    assert ledger(localgate_instance) == ([{"asset": "USD", "amount": 0, "pending_in": 10000, "pending_out": 0}], [pending])

    # Past it, the deposit completes at its own due instant, not at the instant the clock was moved to.
    assert localgate_instance.advance_clock("36h") == {"pay.transaction.completed": 1}
    assert localgate_instance.record["clock"] == "2030-01-03T12:00:00.000Z"
    completed = dict(pending, status="completed", settled_at="2030-01-03T00:00:00.000Z")
    assert ledger(localgate_instance) == ([{"asset": "USD", "amount": 10000, "pending_in": 0, "pending_out": 0}], [completed])
    assert localgate_instance.get("/v1/pay/wallet/transactions/" + pending["id"], subject="alice").body == completed

    spent = move(localgate_instance, "withdraw", {"provider_id": "sandbox", "asset": "USD", "amount": 2500})
    assert spent.status == 201, spent
    assert spent.body["status"] == "completed"
    assert ledger(localgate_instance) == ([{"asset": "USD", "amount": 7500, "pending_in": 0, "pending_out": 0}], [spent.body, completed])

    # Moving back applies nothing and undoes nothing.
    assert localgate_instance.set_clock(START) == {}
    assert localgate_instance.record["clock"] == START
    assert ledger(localgate_instance) == ([{"asset": "USD", "amount": 7500, "pending_in": 0, "pending_out": 0}], [spent.body, completed])


@pytest.mark.localgate(seed="none", clock=START)
def test_a_move_with_nothing_due_applies_nothing_and_keeps_the_record(localgate_instance):
    assert localgate_instance.advance_clock("3d") == {}
    assert localgate_instance.record["clock"] == "2030-01-04T00:00:00.000Z"
    assert "applied" not in localgate_instance.record
    assert localgate_instance.set_clock("2030-06-01T12:00:00.000Z") == {}
    assert localgate_instance.record["clock"] == "2030-06-01T12:00:00.000Z"


# This test freezes the default data set's clock, which every test on the server shares: under xdist against a shared
# server it skips, as the faults and journal test of the default data set does. It leaves the clock frozen at the
# instant it read (a restart without CLOCK puts the server back on the wall clock).
@pytest.mark.skipif(bool(os.environ.get("PYTEST_XDIST_WORKER") and os.environ.get("LOCALGATE_URL")), reason="changes the default data set that every worker on LOCALGATE_URL shares")
def test_the_default_data_set_has_a_clock_of_its_own(localgate, localgate_instance):
    read = localgate.clock()
    assert sorted(read) == ["frozen", "now"]
    try:
        # Back before anything of the demo data falls due, so that nothing applies.
        assert localgate.set_clock("2020-01-01T00:00:00.000Z") == {}
        assert localgate.advance_clock("90m") == {}
        assert localgate.clock() == {"now": "2020-01-01T01:30:00.000Z", "frozen": "2020-01-01T01:30:00.000Z"}
        # An instance's clock is its own.
        assert localgate_instance.record["clock"] is None
        assert localgate_instance.get("/v1/weather/status").status == 200
    finally:
        localgate.set_clock(read["frozen"] or read["now"])
