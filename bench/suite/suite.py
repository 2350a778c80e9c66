"""The suite benchmark's Python client: what a Python suite does per test, standard library only.

    python3 suite.py URL SECRET CALLER      (SUITE_JOB: the bodies, as JSON)

Reads "run" lines on stdin; for each, runs one test (a new demo instance, the reads and writes, the instance
deleted) and prints {"ms": ..., "found": ...} on stdout. urllib opens a new connection per request, as it does
for every suite that uses it.
"""

import base64
import hashlib
import hmac
import json
import os
import sys
import time
import urllib.error
import urllib.request

URL, SECRET, CALLER = sys.argv[1].rstrip("/"), sys.argv[2], sys.argv[3]
JOB = json.loads(os.environ["SUITE_JOB"])


def token(subject, admin=False, ttl=24 * 3600):
    def part(data):
        return base64.urlsafe_b64encode(json.dumps(data, separators=(",", ":")).encode()).rstrip(b"=").decode()

    now = int(time.time())
    claims = {"sub": subject, "iat": now, "exp": now + ttl}
    if admin:
        claims["role"] = "admin"
    signing_input = part({"alg": "HS256", "typ": "JWT"}) + "." + part(claims)
    signature = hmac.new(SECRET.encode(), signing_input.encode(), hashlib.sha256).digest()
    return signing_input + "." + base64.urlsafe_b64encode(signature).rstrip(b"=").decode()


ADMIN, USER = token("suite-admin", admin=True), token(CALLER)


def call(method, path, bearer=None, body=None, expect=200):
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
    if status != expect:
        raise RuntimeError("%s %s: expected %d, got %d: %s" % (method, path, expect, status, payload[:300]))
    return json.loads(payload) if payload else None


def test():
    created = call("POST", "/_instances", ADMIN, {"seed": "demo"}, 201)
    base = created["base_path"]
    try:
        limit = JOB["limit"]
        call("GET", base + "/v1/commerce/products?limit=%d" % limit)
        call("GET", base + "/v1/logistics/vehicles?limit=%d" % limit)
        before = call("GET", base + "/v1/logistics/bookings?limit=%d" % limit, USER)
        call("POST", base + "/v1/commerce/products", USER, JOB["product"], 201)
        booking = call("POST", base + "/v1/logistics/bookings", USER, JOB["booking"], 201)
        after = call("GET", base + "/v1/logistics/bookings?limit=%d" % limit, USER)
        return after["total"] == before["total"] + 1 and any(item["id"] == booking["id"] for item in after["data"])
    finally:
        call("DELETE", "/_instances/" + created["id"], ADMIN, expect=204)


def main():
    print("ready", flush=True)
    for line in sys.stdin:
        if line.strip() != "run":
            continue
        started = time.perf_counter()
        try:
            found = test()
            print(json.dumps({"ms": (time.perf_counter() - started) * 1000, "found": found}), flush=True)
        except Exception as error:  # reported to the orchestrator, which stops the run
            print(json.dumps({"error": str(error)}), flush=True)


if __name__ == "__main__":
    main()
