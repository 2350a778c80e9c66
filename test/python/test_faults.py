"""Faults and the request journal from Python, standard library only: a lost reply, retried with its key.

    LOCALGATE_URL=http://127.0.0.1:3000 AUTH_JWT_SECRET=... python3 -m unittest test_faults
"""

import http.client
import json
import unittest
import urllib.error
import urllib.request

from test_instances import SECRET, URL, call, token


def send(method, path, bearer=None, body=None, headers=None):
    """Sends one request; returns (status, headers, parsed JSON body or None). Raises when the connection drops."""

    sent = {"Accept": "application/json", **(headers or {})}
    if bearer:
        sent["Authorization"] = "Bearer " + bearer
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        sent["Content-Type"] = "application/json"
    request = urllib.request.Request(URL + path, data=data, headers=sent, method=method)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            status, answer, payload = response.status, response.headers, response.read()
    except urllib.error.HTTPError as error:
        status, answer, payload = error.code, error.headers, error.read()
    return status, answer, json.loads(payload) if payload else None


class FaultTest(unittest.TestCase):
    """Each test gets its own instance with pay provisioned, and its own fault rules."""

    def setUp(self):
        self.assertTrue(SECRET, "set AUTH_JWT_SECRET to the server's secret")
        self.admin = token("ci", admin=True)
        status, created = call("POST", "/_instances", self.admin, {"pay": True})
        self.assertEqual(status, 201, created)
        self.id = created["id"]
        self.base = created["base_path"]
        self.addCleanup(call, "DELETE", "/_instances/" + self.id, self.admin)

    def faults(self, rules, seed=0):
        status, stored = call("PUT", "/_instances/" + self.id + "/faults", self.admin, {"seed": seed, "rules": rules})
        self.assertEqual(status, 200, stored)
        return stored

    def deposit(self, key):
        return send("POST", self.base + "/v1/pay/gateway/deposit", token("dana"),
                    {"provider_id": "sandbox", "asset": "USD", "amount": 500}, {"Idempotency-Key": key})

    def test_a_lost_reply_is_retried_with_its_key_and_replayed(self):
        self.faults([{"method": "POST", "path": "/v1/pay/gateway/deposit", "drop": "after", "times": 1}])

        with self.assertRaises((http.client.RemoteDisconnected, ConnectionError, urllib.error.URLError)):
            self.deposit("order-1")

        status, headers, transaction = self.deposit("order-1")
        self.assertEqual(status, 201, transaction)
        self.assertEqual(headers["Idempotent-Replayed"], "true")

        status, ledger = call("GET", self.base + "/v1/pay/wallet/transactions", token("dana"))
        self.assertEqual((status, ledger["total"]), (200, 1))
        self.assertEqual(ledger["data"][0]["id"], transaction["id"])

        pattern = {"method": "POST", "urlPath": "/v1/pay/gateway/deposit",
                   "headers": {"Idempotency-Key": {"equalTo": "order-1"}},
                   "bodyPatterns": [{"equalToJson": {"amount": 500}, "ignoreExtraElements": True}]}
        status, found = call("POST", "/_instances/" + self.id + "/requests/find", self.admin, pattern)
        self.assertEqual(status, 200, found)
        self.assertEqual([entry["status"] for entry in found["requests"]], [201, 201])
        self.assertIsNotNone(found["requests"][0]["fault"])
        self.assertIsNone(found["requests"][1]["fault"])
        self.assertEqual(found["requests"][0]["headers"]["authorization"], "[hidden]")

    def test_an_injected_status_says_when_to_retry_and_writes_nothing(self):
        stored = self.faults([{"method": "POST", "path": "/v1/pay/gateway/*", "status": 503,
                               "code": "gateway_down", "retry_after": 2, "times": 1}])

        status, headers, error = self.deposit("order-2")
        self.assertEqual((status, error["code"], headers["Retry-After"]), (503, "gateway_down", "2"))
        status, headers, transaction = self.deposit("order-2")
        self.assertEqual(status, 201, transaction)
        self.assertIsNone(headers["Idempotent-Replayed"])

        status, rules = call("GET", "/_instances/" + self.id + "/faults", self.admin)
        self.assertEqual(rules["rules"][0], {**stored["rules"][0], "hits": 1})
        status, counted = call("POST", "/_instances/" + self.id + "/requests/count", self.admin, {"urlPathPattern": "/v1/pay/.*"})
        self.assertEqual((status, counted), (200, {"count": 2}))

    def test_a_bad_rule_is_refused_naming_the_field(self):
        status, error = call("PUT", "/_instances/" + self.id + "/faults", self.admin,
                             {"rules": [{"path": "/v1/pay/*", "status": 200}]})
        self.assertEqual((status, error["details"][0]["field"]), (400, "rules.0.status"))


if __name__ == "__main__":
    unittest.main()
