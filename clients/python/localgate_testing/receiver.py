"""A webhook receiver for tests: a loopback HTTP server that records and verifies localgate's deliveries.

It stands in for the service whose webhook handler a test checks. Each request is recorded in arrival order and
verified as the Standard Webhooks specification says (HMAC-SHA256 keyed with the secret's base64-decoded bytes, over
``<webhook-id>.<webhook-timestamp>.<body>``, the timestamp within five minutes), with the standard library only.
"""

import base64
import datetime
import hashlib
import hmac
import http.server
import json
import secrets
import threading
import urllib.parse

from .client import LocalgateError

# A delivery is one event of the data set: far less than this. A bigger body is answered 413 and recorded unverified.
MAX_BODY_BYTES = 1024 * 1024
# Standard Webhooks' tolerance, either way of the receiver's clock.
TOLERANCE_S = 5 * 60
_PREFIX = "whsec_"


def sign(secret, webhook_id, timestamp, body):
    """The ``webhook-signature`` a sender with this secret gives: ``v1,<base64 HMAC-SHA256>`` of id, timestamp (unix seconds) and body."""

    content = ("%s.%d.%s" % (webhook_id, timestamp, body)).encode()
    return "v1," + base64.b64encode(hmac.new(_key(secret), content, hashlib.sha256).digest()).decode()


def _key(secret):
    return base64.b64decode(secret[len(_PREFIX):] if secret.startswith(_PREFIX) else secret, validate=True)


class Delivery:
    """One request the receiver got: seq (1 for the first), method, path, headers (lower-case names), body (text),
    event (the parsed body when it is an event, else None), webhook_id, verified, failure (why not verified, else
    None), status (what the receiver answered) and received_at (a UTC datetime)."""

    def __init__(self, seq, method, path, headers, body, event, verified, failure, status):
        self.seq = seq
        self.method = method
        self.path = path
        self.headers = headers
        self.body = body
        self.event = event
        self.webhook_id = headers.get("webhook-id")
        self.verified = verified
        self.failure = failure
        self.status = status
        self.received_at = datetime.datetime.now(datetime.timezone.utc)

    def __repr__(self):
        return "Delivery(%d, %r, %s, verified=%r, status=%d)" % (self.seq, self.webhook_id, self.event and self.event["type"], self.verified, self.status)


def _event_of(text):
    """The body as an event, when it has an event's shape ({id, type, created_at, data}); None otherwise."""

    try:
        parsed = json.loads(text)
    except ValueError:
        return None
    if not isinstance(parsed, dict) or set(parsed) != {"id", "type", "created_at", "data"} or not isinstance(parsed["data"], dict):
        return None
    return parsed


def _instant(text):
    """An ISO 8601 UTC instant (``2030-01-01T00:00:00.000Z``) as unix seconds; None for what is no instant."""

    try:
        return datetime.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except (AttributeError, ValueError):
        return None


class Receiver:
    """A receiver listening on 127.0.0.1: give ``url`` and ``secret`` to a webhook endpoint, then read ``deliveries``.

    secret: the endpoint's ``whsec_...`` secret, minted as localgate mints one when None. now: a function answering
    the clock timestamps are checked against (a datetime), read as each delivery arrives; the wall clock when None.
    instance: for an endpoint whose signing_clock is "instance", the ``Instance``: each timestamp is then checked
    against the instant its attempt was due on the instance's clock (see ``due_instant``), so that a long move's
    attempts, due days before its target, hold. status: what it answers when told nothing else (204).
    """

    def __init__(self, secret=None, now=None, status=204, instance=None):
        self.secret = secret or _PREFIX + base64.b64encode(secrets.token_bytes(32)).decode()
        # A secret that is not base64 (binascii.Error, a ValueError) or is empty fails here, not at the first delivery.
        if not _key(self.secret):
            raise ValueError("secret must hold a key: whsec_ and the key's bytes in base64")
        self.now = now
        self.instance = instance
        self.status = status
        self._deliveries = []
        self._answers = []
        self._changed = threading.Condition()
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):
                receiver._receive(self)

            do_PUT = do_PATCH = do_DELETE = do_GET = do_POST

            def log_message(self, *args):
                pass

        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = "http://127.0.0.1:%d/" % self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()

    @property
    def deliveries(self):
        """Every request received since the start (or the last clear), in arrival order."""

        with self._changed:
            return list(self._deliveries)

    def respond_with(self, status, times=1):
        """Answers status to the next ``times`` requests, after any answers told before; then the default again."""

        if not isinstance(status, int) or not 200 <= status <= 599:
            raise ValueError("status must be an HTTP status from 200 to 599, not %r" % (status,))
        if not isinstance(times, int) or times < 1:
            raise ValueError("times must be a whole number from 1, not %r" % (times,))
        with self._changed:
            self._answers.extend([status] * times)

    def wait_for(self, count, timeout=5.0):
        """Returns the deliveries once ``count`` have arrived; raises AssertionError after ``timeout`` seconds saying how many did."""

        with self._changed:
            if not self._changed.wait_for(lambda: len(self._deliveries) >= count, timeout):
                raise AssertionError("expected %d webhook deliveries within %gs, got %d" % (count, timeout, len(self._deliveries)))
            return list(self._deliveries)

    def clear(self):
        """Forgets the deliveries received (the answers told stay)."""

        with self._changed:
            self._deliveries = []

    def close(self):
        """Stops listening."""

        self._server.shutdown()
        self._server.server_close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def verify(self, headers, body):
        """Why a request's signature does not hold (the words of the reference libraries), or None when it does."""

        webhook_id, timestamp, signatures = (headers.get(name) for name in ("webhook-id", "webhook-timestamp", "webhook-signature"))
        if not (webhook_id and timestamp and signatures):
            return "Missing required headers"
        try:
            at = int(timestamp)
        except ValueError:
            return "Invalid Signature Headers"
        if self.instance is not None:
            try:
                now = self.due_instant(webhook_id, at, body)
            except (LocalgateError, OSError) as err:
                return "Could not read when the attempt was due: %s" % err
        else:
            now = (self.now() if self.now else datetime.datetime.now(datetime.timezone.utc)).timestamp()
        if now - at > TOLERANCE_S:
            return "Message timestamp too old"
        if at - now > TOLERANCE_S:
            return "Message timestamp too new"
        expected = sign(self.secret, webhook_id, at, body)
        if any(hmac.compare_digest(given, expected) for given in signatures.split(" ")):
            return None
        return "No matching signature found"

    def due_instant(self, webhook_id, at, body):
        """When an attempt of a message was due on the instance's clock (unix seconds): of the instants the instance
        knows, the nearest to ``at``. They are the event's created_at (a first attempt is due as its event is written),
        each next_attempt_at its delivery journal holds for the webhook-id (a retry's), and the clock's instant (an
        attempt made there and then). Nearest, so that a delivery checked after later attempts were made holds as it
        did on arrival."""

        dues = [_instant(attempt["next_attempt_at"]) for attempt in self.instance.deliveries({"webhook_id": webhook_id})]
        event = _event_of(body)
        dues.append(_instant(event["created_at"]) if event else None)
        record = self.instance.server.admin("GET", "/_instances/" + urllib.parse.quote(self.instance.id, safe=""))
        dues.append(_instant(record["clock"]) if record["clock"] else datetime.datetime.now(datetime.timezone.utc).timestamp())
        return min((due for due in dues if due is not None), key=lambda due: abs(due - at))

    def _receive(self, handler):
        headers = {name.lower(): value for name, value in handler.headers.items()}
        declared = headers.get("content-length", "")
        length = int(declared) if declared.isdigit() else 0
        if length > MAX_BODY_BYTES:
            body, failure, status = "", "Body over %d bytes" % MAX_BODY_BYTES, 413
            handler.close_connection = True
        else:
            body = handler.rfile.read(length).decode("utf-8", "replace")
            failure, status = self.verify(headers, body), None
        # Recorded before the answer, so that a sender that has its answer finds the delivery recorded.
        with self._changed:
            if status is None:
                status = self._answers.pop(0) if self._answers else self.status
            self._deliveries.append(Delivery(len(self._deliveries) + 1, handler.command, handler.path, headers, body, _event_of(body), failure is None, failure, status))
            self._changed.notify_all()
        handler.send_response(status)
        handler.send_header("Content-Length", "0")
        handler.end_headers()


def start_receiver(secret=None, now=None, status=204, instance=None):
    """A ``Receiver`` listening on a free port of 127.0.0.1 (see ``Receiver``); close it, or use it in a ``with``."""

    return Receiver(secret=secret, now=now, status=status, instance=instance)


__all__ = ["Delivery", "Receiver", "sign", "start_receiver", "MAX_BODY_BYTES"]
