"""The client's own calls: instances, snapshots, clock, tokens and refusals."""

import urllib.request

import pytest

from localgate_testing import LocalgateError, mint_token


def test_the_instance_url_answers_plain_http_clients(localgate_instance):
    with urllib.request.urlopen(localgate_instance.url + "/v1/commerce/products?limit=1", timeout=30) as response:
        assert response.status == 200
        assert response.headers["X-Total-Count"] is not None


def test_snapshot_restore_and_reset(localgate_instance):
    snapshot = localgate_instance.snapshot()
    made = localgate_instance.post("/v1/commerce/products", {
        "name": "Kept loaf", "price": 2.5, "currency": "USD", "business_id": "d851fadb-03ca-5a24-ba16-c15cce19933b",
    }, subject="alice")
    assert made.status == 201, made
    assert localgate_instance.get("/v1/commerce/products/" + made.body["id"]).status == 200

    localgate_instance.restore(snapshot)
    assert localgate_instance.get("/v1/commerce/products/" + made.body["id"]).status == 404


def test_the_clock_freezes_and_moves(localgate_instance):
    localgate_instance.set_clock("2030-01-01T00:00:00.000Z")
    localgate_instance.advance_clock("2h")
    assert localgate_instance.record["clock"] == "2030-01-01T02:00:00.000Z"
    localgate_instance.reset()
    assert localgate_instance.record["clock"] is None


def test_a_refused_admin_call_raises_with_the_error_code(localgate, localgate_instance):
    with pytest.raises(LocalgateError) as refused:
        localgate_instance.advance_clock("soon")
    assert refused.value.status == 400
    assert refused.value.code == "validation_failed"

    localgate_instance.delete()
    localgate_instance.delete()
    assert localgate_instance.id not in [live["id"] for live in localgate.instances()]


def test_tokens_need_a_future_expiry(localgate):
    with pytest.raises(ValueError):
        mint_token(localgate.secret, "alice", ttl=0)
    assert localgate.request("GET", "/v1/logistics/bookings", token=localgate.token("alice")).status == 200
    assert localgate.request("GET", "/v1/logistics/bookings", token=mint_token("x" * 32, "alice")).status == 401


def test_a_fork_copies_the_instance_as_it_is_now(localgate_instance):
    made = localgate_instance.post("/v1/commerce/products", {
        "name": "Forked loaf", "price": 2.5, "currency": "USD", "business_id": "d851fadb-03ca-5a24-ba16-c15cce19933b",
    }, subject="alice")
    fork = localgate_instance.fork()
    try:
        assert fork.get("/v1/commerce/products/" + made.body["id"]).status == 200
        assert fork.id != localgate_instance.id
    finally:
        fork.delete()


def test_the_default_data_set_exports_as_a_fixture_an_instance_loads(localgate):
    exported = localgate.export()
    assert sorted(exported) == ["commerce", "localgate", "logistics"]
    assert exported["localgate"]["format"] == 1
    assert "instance" not in exported["localgate"]
    copy = localgate.instance(fixture=exported)
    try:
        assert copy.record["seed"] == "none"
        assert copy.export()["commerce"] == exported["commerce"]
        assert copy.export()["logistics"] == exported["logistics"]
    finally:
        copy.delete()


def test_an_export_loads_back_into_a_new_instance(localgate, localgate_instance):
    made = localgate_instance.post("/v1/commerce/products", {
        "name": "Carried loaf", "price": 3.5, "currency": "USD", "business_id": "d851fadb-03ca-5a24-ba16-c15cce19933b",
    }, subject="alice")
    exported = localgate_instance.export()
    assert exported["localgate"]["format"] == 1
    copy = localgate.instance(seed="none", fixture=exported)
    try:
        assert copy.get("/v1/commerce/products/" + made.body["id"]).body == made.body
        assert copy.get("/v1/commerce/products?limit=100").body == localgate_instance.get("/v1/commerce/products?limit=100").body
        assert copy.export() == exported
    finally:
        copy.delete()
