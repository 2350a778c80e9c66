"""A client for a running localgate: tokens, instances, clocks, requests into an instance, faults and the request journal."""

import base64
import hashlib
import hmac
import http.client
import json
import threading
import time
import urllib.parse


def mint_token(secret, subject, admin=False, ttl=3600):
    """An HS256 JWT as localgate mints it: sub, iat, exp, and role "admin" for the admin routes."""

    if ttl <= 0:
        raise ValueError("ttl must be at least one second: localgate refuses a token without a future exp")

    def part(data):
        raw = json.dumps(data, separators=(",", ":")).encode()
        return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()

    now = int(time.time())
    claims = {"sub": subject, "iat": now, "exp": now + ttl}
    if admin:
        claims["role"] = "admin"
    signing_input = part({"alg": "HS256", "typ": "JWT"}) + "." + part(claims)
    signature = hmac.new(secret.encode(), signing_input.encode(), hashlib.sha256).digest()
    return signing_input + "." + base64.urlsafe_b64encode(signature).rstrip(b"=").decode()


class Response:
    """One answer: status, headers (lower-case names) and the parsed JSON body (None when empty)."""

    def __init__(self, status, headers, body):
        self.status = status
        self.headers = headers
        self.body = body

    def __repr__(self):
        return "Response(%d, %r)" % (self.status, self.body)


class LocalgateError(Exception):
    """An admin call that localgate refused: carries the response, whose body is the error shape."""

    def __init__(self, response):
        body = response.body if isinstance(response.body, dict) else {}
        super().__init__("%d %s: %s" % (response.status, body.get("code"), body.get("message")))
        self.response = response
        self.status = response.status
        self.code = body.get("code")


class ScenarioFailed(AssertionError):
    """A scenario step whose expectation was not met: the message names the step, what was expected and what came.

    An AssertionError, so that pytest reports it as a failed test; ``run`` is the whole answer (steps, failure).
    """

    def __init__(self, run):
        super().__init__(run["message"])
        self.run = run


def _scenario_text(path):
    """A scenario file's bytes, refused before it is read when it is larger than a scenario may be (1 MiB)."""

    with open(path, "rb") as handle:
        text = handle.read(2 ** 20 + 1)
    if len(text) > 2 ** 20:
        raise ValueError("%s is larger than 1 MiB, the most a scenario may hold" % path)
    return text


class Localgate:
    """A running localgate server, reached over HTTP with one kept-alive connection per thread."""

    def __init__(self, url, secret):
        parsed = urllib.parse.urlsplit(url)
        if parsed.scheme != "http" or not parsed.hostname:
            raise ValueError("url must be an http:// URL of a localgate server, not %r" % url)
        if not secret:
            raise ValueError("secret must be the server's AUTH_JWT_SECRET: tokens are signed with it")
        self.url = url.rstrip("/")
        self.secret = secret
        self._host = parsed.hostname
        self._port = parsed.port or 80
        self._local = threading.local()
        self.faults = Faults(self, "/_faults")
        self.requests = Requests(self, "/_requests")

    def token(self, subject, admin=False, ttl=3600):
        """A bearer token for a subject, signed with the server's secret."""

        return mint_token(self.secret, subject, admin=admin, ttl=ttl)

    def request(self, method, path, body=None, token=None, headers=None, data=None):
        """Sends one request; error statuses are answers (a Response), not exceptions. data: raw bytes instead of a JSON body."""

        sent = {"Accept": "application/json"}
        if token:
            sent["Authorization"] = "Bearer " + token
        if body is not None:
            data = json.dumps(body).encode()
            sent["Content-Type"] = "application/json"
        sent.update(headers or {})
        # A kept-alive connection the server has closed is opened again once.
        for attempt in (1, 2):
            connection = self._connection()
            try:
                connection.request(method, path, body=data, headers=sent)
                answer = connection.getresponse()
                payload = answer.read()
                break
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                connection.close()
                self._local.connection = None
                if attempt == 2:
                    raise
        received = {name.lower(): value for name, value in answer.getheaders()}
        parsed = json.loads(payload) if payload and received.get("content-type", "").startswith("application/json") else (payload.decode() or None)
        return Response(answer.status, received, parsed)

    def admin(self, method, path, body=None):
        """An admin call: the parsed body of a 2xx, else LocalgateError."""

        response = self.request(method, path, body, token=self.token("localgate-testing", admin=True))
        if response.status >= 300:
            raise LocalgateError(response)
        return response.body

    def run_scenario(self, path, keep=False):
        """Runs a scenario file (YAML or JSON) on a fresh instance made with its instance block (deleted after, unless keep).

        Returns the run (its steps, and the instance id when kept); raises ScenarioFailed with the failing step's
        message, and LocalgateError when the file cannot run (the message names the step and field).
        """

        return self._scenario("/_scenarios/run" + ("?keep=true" if keep else ""), path)

    def _scenario(self, route, path):
        # A .json file goes as JSON (the server takes up to 1 MiB of it), any other as YAML (up to 256 KiB).
        media = "application/json" if str(path).lower().endswith(".json") else "application/yaml"
        response = self.request("POST", route, token=self.token("localgate-testing", admin=True),
                                headers={"Content-Type": media}, data=_scenario_text(path))
        if response.status != 200:
            raise LocalgateError(response)
        if not response.body["ok"]:
            raise ScenarioFailed(response.body)
        return response.body

    def health(self):
        """The server's /health body."""

        return self.request("GET", "/health").body

    def instance(self, seed=None, fixture=None, clock=None, ids=None, pay=None, fork=None):
        """A new isolated instance: the demo data (or none, or a fixture), its own clock and ids; fork: a copy of that instance id.

        Options left None take the server's defaults: the demo data, or for an exported fixture its own world, clock,
        ids and pay.
        """

        # A fork copies its source: no other option goes with it.
        body = {"from": fork} if fork is not None else {}
        for name, value in (("seed", seed), ("fixture", fixture), ("clock", clock), ("ids", ids), ("pay", pay)):
            if value is not None:
                body[name] = value
        return Instance(self, self.admin("POST", "/_instances", body))

    def export(self):
        """The default data set's records as a fixture file (a dict), as `localgate export` writes it."""

        return self.admin("GET", "/_export")

    def instances(self):
        """The records of the live instances, oldest first (the first page of 100)."""

        return self.admin("GET", "/_instances?limit=100")["data"]

    def clock(self):
        """The default data set's clock: {"now": <ISO instant>, "frozen": <the instant it stands at, or None on the wall clock>}."""

        return self.admin("GET", "/_clock")

    def set_clock(self, now):
        """Freezes the default data set's clock at an ISO 8601 UTC instant; returns what fell due on the way, counted by type."""

        return self.admin("PUT", "/_clock", {"now": now})["applied"]

    def advance_clock(self, by):
        """Moves the default data set's clock forward (500ms, 90s, 30m, 2h, 7d) and freezes it there; returns what fell due, counted by type.

        The default data set is shared by everything that uses the server: its clock stays frozen until moved again
        (a restart with CLOCK unset puts it back on the wall clock).
        """

        return self.admin("PUT", "/_clock", {"advance": by})["applied"]

    def close(self):
        """Closes this thread's connection."""

        connection = getattr(self._local, "connection", None)
        if connection is not None:
            connection.close()
            self._local.connection = None

    def _connection(self):
        connection = getattr(self._local, "connection", None)
        if connection is None:
            connection = http.client.HTTPConnection(self._host, self._port, timeout=30)
            self._local.connection = connection
        return connection


class Instance:
    """One instance of a server: requests go to its base path, admin calls to /_instances/<id>."""

    def __init__(self, server, record):
        self.server = server
        self.record = record
        self.id = record["id"]
        self.base_path = record["base_path"]
        self.url = server.url + self.base_path
        self.faults = Faults(server, self._admin("/faults"))
        self.requests = Requests(server, self._admin("/requests"))

    def token(self, subject, admin=False, ttl=3600):
        """A bearer token for a subject, accepted by this instance's server."""

        return self.server.token(subject, admin=admin, ttl=ttl)

    def request(self, method, path, body=None, subject=None, headers=None):
        """Sends a request to the API path (/v1/...) in this instance, as subject when given."""

        token = self.token(subject) if subject else None
        return self.server.request(method, self.base_path + path, body, token=token, headers=headers)

    def get(self, path, subject=None):
        """GET an API path in this instance."""

        return self.request("GET", path, subject=subject)

    def post(self, path, body, subject=None, headers=None):
        """POST a JSON body to an API path in this instance."""

        return self.request("POST", path, body, subject=subject, headers=headers)

    def fork(self):
        """A new instance that is a copy of this one as it is now: data, event log, clock and id counter, and no webhook endpoint."""

        return self.server.instance(fork=self.id)

    def export(self):
        """The instance's whole state as a fixture file (a dict): server.instance(seed="none", fixture=...) loads it back."""

        return self.server.admin("GET", self._admin("/export"))

    def reset(self):
        """Back to the state at creation: data, event log, clock and ids; webhook endpoints, fault rules and journals stay."""

        self.record = self.server.admin("POST", self._admin("/reset"))

    def snapshot(self):
        """Keeps a copy of the current state; returns its id."""

        return self.server.admin("POST", self._admin("/snapshots"))["snapshot_id"]

    def restore(self, snapshot_id):
        """Puts back the state a snapshot holds (its deliveries pending to the endpoints still set); webhook endpoints, fault rules and journals stay."""

        self.record = self.server.admin("POST", self._admin("/restore"), {"snapshot_id": snapshot_id})

    def set_clock(self, now):
        """Freezes the instance's clock at an ISO 8601 UTC instant; returns what fell due on the way (see advance_clock)."""

        return self._move_clock({"now": now})

    def advance_clock(self, by):
        """Moves the clock forward (500ms, 90s, 30m, 2h, 7d) and freezes it there.

        Every transition due on the way (a pending payment settling, a booking starting or ending)
        is applied before this returns; the answer counts them by type, {"pay.transaction.completed": 1}, and is {}
        when nothing fell due. The instance's record (with its new clock) is kept in record.
        """

        return self._move_clock({"advance": by})

    def move_clock(self, now=None, advance=None):
        """Moves the clock as set_clock (now=) or advance_clock (advance=) does; returns the whole answer:
        {"applied": {type: count}, "attempted": <webhook attempts made on the way>, "remaining": <deliveries with an
        attempt due still to make>}. The move walks through what falls due in time order, an instant's transitions
        before its attempts; past the server's CLOCK_MOVE_DEADLINE_MS it answers with the attempts left counted in
        remaining (0 otherwise), which the server makes after the answer, in due order."""

        if (now is None) == (advance is None):
            raise ValueError("give one of now= and advance=")
        answer = self.server.admin("PUT", self._admin("/clock"), {"now": now} if now is not None else {"advance": advance})
        moved = {"applied": answer.pop("applied"), "attempted": answer.pop("attempted", 0), "remaining": answer.pop("remaining", 0)}
        self.record = answer
        return moved

    def set_webhooks(self, endpoints):
        """Replaces the instance's webhook endpoints ({"url", "types", "secret", "signing_clock", "retry_schedule",
        "disabled"}, all but url optional); returns them as stored, each with its id and its secret in full (the only time it is shown)."""

        return self.server.admin("PUT", self._admin("/webhooks"), {"endpoints": endpoints})["endpoints"]

    def webhooks(self):
        """The endpoints, secrets masked, each with how many deliveries succeeded ("delivered") and attempts failed ("failed")."""

        return self.server.admin("GET", self._admin("/webhooks"))["endpoints"]

    def clear_webhooks(self):
        """Removes every endpoint, and the deliveries pending to them."""

        self.server.admin("DELETE", self._admin("/webhooks"))

    def flush_webhooks(self):
        """Makes every webhook attempt due at the instance's current instant; returns how many were made."""

        return self.server.admin("POST", self._admin("/webhooks/flush"))["attempted"]

    def disable_webhook(self, endpoint_id):
        """Pauses an endpoint: its deliveries wait, pending, until it is enabled; returns it as webhooks() reads it."""

        return self.server.admin("PATCH", self._endpoint(endpoint_id), {"disabled": True})

    def enable_webhook(self, endpoint_id):
        """Enables an endpoint (paused, or disabled after giving up WEBHOOK_DISABLE_AFTER deliveries in a row): what
        waited goes in due order; returns it as webhooks() reads it."""

        return self.server.admin("PATCH", self._endpoint(endpoint_id), {"disabled": False})

    def rotate_webhook_secret(self, endpoint_id, overlap=None):
        """Gives an endpoint a new secret; for ``overlap`` (a duration, 24h when None) of the instance's clock the old
        one signs beside it. Returns the endpoint with the new secret in full (the only time it is shown)."""

        return self.server.admin("POST", self._endpoint(endpoint_id) + "/rotate", {} if overlap is None else {"overlap": overlap})

    def resend_event(self, event_id, endpoint_id=None):
        """Makes a new attempt of an event now, the same webhook-id, to each endpoint it matches (or to endpoint_id);
        returns how many attempts were made."""

        path = self._admin("/events/" + urllib.parse.quote(event_id, safe="") + "/resend")
        return self.server.admin("POST", path, {} if endpoint_id is None else {"endpoint_id": endpoint_id})["attempted"]

    def recover_webhook(self, endpoint_id, since):
        """Sends again each failed or given-up delivery to an endpoint of the events created from ``since`` (an ISO 8601
        UTC instant) on; returns how many attempts were made."""

        return self.server.admin("POST", self._endpoint(endpoint_id) + "/recover", {"since": since})["attempted"]

    def deliveries(self, pattern=None):
        """The webhook attempts made, in the order they were made; pattern: {type (a trailing * matches a prefix),
        status (None for no answer), attempt, endpoint_id, webhook_id}, each given field must hold."""

        return self.server.admin("POST", self._admin("/webhooks/deliveries/find"), pattern or {})["deliveries"]

    def count_deliveries(self, pattern=None):
        """How many webhook attempts a pattern (as deliveries takes it) matches; every attempt without one."""

        return self.server.admin("POST", self._admin("/webhooks/deliveries/count"), pattern or {})["count"]

    def clear_deliveries(self):
        """Forgets the webhook attempts made (the deliveries still pending go on)."""

        self.server.admin("DELETE", self._admin("/webhooks/deliveries"))

    def events(self, after=None, type=None, limit=None):
        """A page of the instance's events in their order: after the event id ``after`` (from the oldest kept without
        it), of one type or a prefix ending in * (``pay.*``), at most ``limit`` (1 to 1000; the server's default 100).
        Read on with after= the last one's id for more."""

        query = {name: value for name, value in (("after", after), ("type", type), ("limit", limit)) if value is not None}
        return self.server.admin("GET", self._admin("/events?" + urllib.parse.urlencode(query)))["data"]

    def _move_clock(self, body):
        answer = self.server.admin("PUT", self._admin("/clock"), body)
        applied = answer.pop("applied")
        # The webhook attempts made on the way and left: move_clock answers them; the record stays the instance's.
        answer.pop("attempted", None)
        answer.pop("remaining", None)
        self.record = answer
        return applied

    def run_scenario(self, path):
        """Runs a scenario file's steps on this instance as it stands (its instance block is not applied).

        Returns the run; raises ScenarioFailed with the failing step's message, as the TypeScript kit rejects.
        """

        return self.server._scenario(self._admin("/scenario"), path)

    def delete(self):
        """Deletes the instance; deleting one already gone is not an error."""

        response = self.server.request("DELETE", self._admin(""), token=self.server.token("localgate-testing", admin=True))
        if response.status not in (204, 404):
            raise LocalgateError(response)

    def _admin(self, rest):
        return "/_instances/" + urllib.parse.quote(self.id, safe="") + rest

    def _endpoint(self, endpoint_id):
        return self._admin("/webhooks/" + urllib.parse.quote(endpoint_id, safe=""))


class Faults:
    """The fault rules of a data set (an instance's, or the default one's): status, latency and lost replies."""

    def __init__(self, server, path):
        self._server = server
        self._path = path

    def set(self, rules, seed=0):
        """Replaces the rules; returns them as stored, {"seed", "rules"}, each rule with its "id" and "hits"."""

        return self._server.admin("PUT", self._path, {"seed": seed, "rules": rules})

    def get(self):
        """The rules, each with how many requests it acted on ("hits")."""

        return self._server.admin("GET", self._path)

    def clear(self):
        """Removes every rule."""

        self._server.admin("DELETE", self._path)


class Requests:
    """The request journal of a data set: what its clients sent, matched with WireMock's request patterns."""

    _page = 100

    def __init__(self, server, path):
        self._server = server
        self._path = path

    def list(self, unmatched=False):
        """Every entry kept, oldest first; unmatched=True: only requests no route took, each with its near_miss."""

        entries = []
        while True:
            query = urllib.parse.urlencode({"limit": self._page, "offset": len(entries), "unmatched": "true" if unmatched else "false"})
            page = self._server.admin("GET", self._path + "?" + query)
            entries.extend(page["data"])
            if not page["data"] or len(entries) >= page["total"]:
                return entries

    def count(self, pattern=None):
        """How many entries a WireMock request pattern matches (every entry without one)."""

        return self._server.admin("POST", self._path + "/count", pattern or {})["count"]

    def find(self, pattern=None):
        """The entries a WireMock request pattern matches, oldest first."""

        return self._server.admin("POST", self._path + "/find", pattern or {})["requests"]

    def clear(self):
        """Forgets every entry."""

        self._server.admin("DELETE", self._path)
