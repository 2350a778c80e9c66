"""Three tests as a user writes them: each gets a fresh instance of the demo data."""

import pytest


def first_id(instance, path):
    page = instance.get(path).body
    return page["data"][0]["id"]


def test_a_booking_is_private_to_its_customer(localgate_instance):
    vehicle = first_id(localgate_instance, "/v1/logistics/vehicles?available=true&limit=1")
    depot = first_id(localgate_instance, "/v1/logistics/locations?limit=1")

    booked = localgate_instance.post("/v1/logistics/bookings", {
        "vehicle_id": vehicle, "pickup_location_id": depot, "dropoff_location_id": depot,
        "pickup_at": "2030-06-01T10:00:00Z", "return_at": "2030-06-03T10:00:00Z",
    }, subject="alice")
    assert booked.status == 201, booked
    assert booked.body["customer_id"] == "alice"

    assert localgate_instance.get("/v1/logistics/bookings", subject="alice").body["total"] == 1
    assert localgate_instance.get("/v1/logistics/bookings", subject="bob").body["total"] == 0


def test_each_test_starts_from_the_demo_data_again(localgate_instance):
    # The booking of the test before is not here: every test has an instance of its own.
    assert localgate_instance.get("/v1/logistics/bookings", subject="alice").body["total"] == 0


@pytest.mark.localgate(seed="none", clock="2030-01-01T00:00:00.000Z")
def test_an_empty_world_with_a_frozen_clock(localgate_instance):
    assert localgate_instance.get("/v1/commerce/products").body["total"] == 0
    assert localgate_instance.record["clock"] == "2030-01-01T00:00:00.000Z"
