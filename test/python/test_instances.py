"""A test suite in Python, standard library only, that gets a fresh localgate instance per test.

    LOCALGATE_URL=http://127.0.0.1:3000 AUTH_JWT_SECRET=... python3 -m unittest test_instances

AUTH_JWT_SECRET is the server's secret: the one it was started with, or the one it keeps in
DATA_DIR/.jwt-secret (`AUTH_JWT_SECRET=$(cat data/.jwt-secret)`). The suite mints its own tokens
with it, so it needs nothing but Python.
"""

import base64
import hashlib
import hmac
import json
import os
import time
import unittest
import urllib.error
import urllib.request

URL = os.environ.get("LOCALGATE_URL", "http://127.0.0.1:3000").rstrip("/")
SECRET = os.environ.get("AUTH_JWT_SECRET", "")


def token(subject, admin=False, ttl=3600):
    """An HS256 JWT as localgate mints it: sub, iat, exp, and role "admin" for the /_instances routes."""

    def part(data):
        raw = json.dumps(data, separators=(",", ":")).encode()
        return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()

    now = int(time.time())
    claims = {"sub": subject, "iat": now, "exp": now + ttl}
    if admin:
        claims["role"] = "admin"
    signing_input = part({"alg": "HS256", "typ": "JWT"}) + "." + part(claims)
    signature = hmac.new(SECRET.encode(), signing_input.encode(), hashlib.sha256).digest()
    return signing_input + "." + base64.urlsafe_b64encode(signature).rstrip(b"=").decode()


def call(method, path, bearer=None, body=None):
    """Sends one request; returns (status, parsed JSON body or None). Error statuses are answers, not exceptions."""

    headers = {"Accept": "application/json"}
    if bearer:
        headers["Authorization"] = "Bearer " + bearer
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    request = urllib.request.Request(URL + path, data=data, headers=headers, method=method)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            status, payload = response.status, response.read()
    except urllib.error.HTTPError as error:
        status, payload = error.code, error.read()
    return status, json.loads(payload) if payload else None


class InstanceTest(unittest.TestCase):
    """Each test gets its own instance of the demo data, deleted afterwards."""

    def setUp(self):
        self.assertTrue(SECRET, "set AUTH_JWT_SECRET to the server's secret")
        self.admin = token("ci", admin=True)
        status, created = call("POST", "/_instances", self.admin, {"seed": "demo"})
        self.assertEqual(status, 201, created)
        self.instance = created
        self.base = created["base_path"]
        self.addCleanup(call, "DELETE", "/_instances/" + created["id"], self.admin)

    def book(self, caller, vehicle, location, pickup_at, return_at):
        return call("POST", self.base + "/v1/logistics/bookings", token(caller), {
            "vehicle_id": vehicle,
            "pickup_location_id": location,
            "dropoff_location_id": location,
            "pickup_at": pickup_at,
            "return_at": return_at,
        })

    def first(self, path):
        status, page = call("GET", self.base + path)
        self.assertEqual(status, 200, page)
        return page["data"][0]["id"]

    def test_refuses_an_overlapping_booking_and_reset_forgets_the_first(self):
        vehicle = self.first("/v1/logistics/vehicles?available=true&limit=1")
        location = self.first("/v1/logistics/locations?limit=1")

        status, booking = self.book("alice", vehicle, location, "2030-06-01T10:00:00Z", "2030-06-03T10:00:00Z")
        self.assertEqual(status, 201, booking)
        self.assertEqual(booking["customer_id"], "alice")

        status, error = self.book("bob", vehicle, location, "2030-06-02T09:00:00Z", "2030-06-02T17:00:00Z")
        self.assertEqual(status, 409, error)
        self.assertEqual(error["code"], "booking_overlap")

        status, _ = call("POST", "/_instances/" + self.instance["id"] + "/reset", self.admin)
        self.assertEqual(status, 200)

        status, mine = call("GET", self.base + "/v1/logistics/bookings", token("alice"))
        self.assertEqual((status, mine["total"]), (200, 0))
        status, error = call("GET", self.base + "/v1/logistics/bookings/" + booking["id"], token("alice"))
        self.assertEqual((status, error["code"]), (404, "booking_not_found"))
        status, _ = self.book("bob", vehicle, location, "2030-06-02T09:00:00Z", "2030-06-02T17:00:00Z")
        self.assertEqual(status, 201)

    def test_a_deleted_instance_answers_404_instance_not_found(self):
        status, _ = call("DELETE", "/_instances/" + self.instance["id"], self.admin)
        self.assertEqual(status, 204)

        for path in (self.base + "/v1/logistics/vehicles", "/_instances/" + self.instance["id"]):
            status, error = call("GET", path, self.admin)
            self.assertEqual((status, error["code"]), (404, "instance_not_found"), path)

    def test_only_an_admin_token_manages_instances(self):
        status, error = call("GET", "/_instances/" + self.instance["id"], token("alice"))
        self.assertEqual((status, error["code"]), (403, "admin_required"))


if __name__ == "__main__":
    unittest.main()
