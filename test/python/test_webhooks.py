"""Webhooks from Python, standard library only: a receiver that verifies Standard Webhooks signatures with hmac.

    LOCALGATE_URL=http://127.0.0.1:3000 AUTH_JWT_SECRET=... python3 -m unittest test_webhooks

localgate and this suite must share a machine: the receiver listens on 127.0.0.1, which WEBHOOK_HOSTS allows.
"""

import base64
import hashlib
import hmac
import http.server
import json
import threading
import unittest

from test_faults import send
from test_instances import SECRET, call, token


def signature(secret, webhook_id, timestamp, body):
    """v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">, keyed with the bytes of the secret after whsec_."""

    key = base64.b64decode(secret[len("whsec_"):])
    digest = hmac.new(key, ("%s.%s.%s" % (webhook_id, timestamp, body)).encode(), hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode()


class Receiver(http.server.ThreadingHTTPServer):
    """Records each POST (headers and body) and answers 204."""

    def __init__(self):
        self.received = []
        self.arrived = threading.Condition()
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"])).decode()
                with receiver.arrived:
                    receiver.received.append(({name.lower(): value for name, value in self.headers.items()}, body))
                    receiver.arrived.notify_all()
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args):
                pass

        super().__init__(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def wait_for(self, count):
        with self.arrived:
            self.arrived.wait_for(lambda: len(self.received) >= count, 10)
            return list(self.received)


class WebhookTest(unittest.TestCase):
    """An instance with pay, a frozen clock and sequential ids; an endpoint to a receiver of the test's own."""

    def setUp(self):
        self.assertTrue(SECRET, "set AUTH_JWT_SECRET to the server's secret")
        self.admin = token("ci", admin=True)
        status, created = call("POST", "/_instances", self.admin, {"seed": "none", "pay": True, "ids": "sequential", "clock": "2030-01-01T00:00:00Z"})
        self.assertEqual(status, 201, created)
        self.path = "/_instances/" + created["id"]
        self.base = created["base_path"]
        self.addCleanup(call, "DELETE", self.path, self.admin)
        self.receiver = Receiver()
        self.addCleanup(self.receiver.server_close)
        self.addCleanup(self.receiver.shutdown)

    def test_a_settled_transfer_is_delivered_signed(self):
        url = "http://127.0.0.1:%d/hooks" % self.receiver.server_address[1]
        status, set_ = call("PUT", self.path + "/webhooks", self.admin, {"endpoints": [{"url": url, "types": ["pay.transaction.completed"]}]})
        self.assertEqual(status, 200, set_)
        secret = set_["endpoints"][0]["secret"]

        status, _, made = send("POST", self.base + "/v1/pay/gateway/deposit", token("alice"),
                               {"provider_id": "bank-transfer", "asset": "USD", "amount": 10000}, {"Idempotency-Key": "deposit-1"})
        self.assertEqual(status, 201, made)
        status, moved = call("PUT", self.path + "/clock", self.admin, {"advance": "2d"})
        self.assertEqual((status, moved["applied"], moved["attempted"]), (200, {"pay.transaction.completed": 1}, 1))

        ((headers, body),) = self.receiver.wait_for(1)
        event = json.loads(body)
        self.assertEqual((event["id"], event["type"], event["data"]["id"]), ("00000000-0000-4000-9000-000000000002", "pay.transaction.completed", made["id"]))
        self.assertEqual(headers["webhook-signature"], signature(secret, headers["webhook-id"], headers["webhook-timestamp"], body))

        status, found = call("POST", self.path + "/webhooks/deliveries/find", self.admin, {"type": "pay.transaction.completed"})
        self.assertEqual(status, 200, found)
        self.assertEqual([(d["webhook_id"], d["status"]) for d in found["deliveries"]], [(headers["webhook-id"], 204)])


if __name__ == "__main__":
    unittest.main()
