"""pytest fixtures for localgate: a server per session (or worker), a fresh instance per test.

Enable it with ``-p localgate_testing.pytest_plugin``, ``pytest_plugins = ["localgate_testing.pytest_plugin"]``
in a conftest.py, or by installing this folder (its entry point loads it).

- ``localgate`` (session): a ``Localgate`` client. With ``LOCALGATE_URL`` and ``AUTH_JWT_SECRET`` set, it uses
  that server; otherwise it starts ``npx --no-install localgate start --memory --port 0`` in the rootdir (or
  ``LOCALGATE_COMMAND start --memory --port 0``) with a fresh secret, and stops it after the session.
- ``localgate_instance`` (function): a fresh ``Instance`` of the demo data, deleted after the test. Mark a test
  ``@pytest.mark.localgate(seed="none", fixture={...}, clock="2030-01-01T00:00:00Z", ids="sequential", pay=True)``
  to make it otherwise.

Under pytest-xdist each worker has its own session fixture, and every test its own instance.
"""

import os
import queue
import re
import secrets
import shlex
import signal
import subprocess
import threading

import pytest

from .client import Localgate

_listening = re.compile(r"localgate listening on (http://\S+)")
_start_timeout_s = float(os.environ.get("LOCALGATE_START_TIMEOUT", "120"))


def pytest_configure(config):
    config.addinivalue_line("markers", "localgate(**options): how localgate_instance makes the test's instance (seed, fixture, clock, ids, pay)")


class _Server:
    """A localgate started for the session: its URL once it listens, stopped with its process group."""

    def __init__(self, root):
        command = shlex.split(os.environ.get("LOCALGATE_COMMAND", "npx --no-install localgate")) + ["start", "--memory", "--port", "0"]
        self.secret = secrets.token_hex(32)
        env = dict(os.environ, AUTH_JWT_SECRET=self.secret, LOG_LEVEL=os.environ.get("LOCALGATE_LOG_LEVEL", "warn"))
        env.pop("PORT", None)
        self.process = subprocess.Popen(
            command, cwd=root, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True, start_new_session=True,
        )
        self.output = []
        lines = queue.Queue()

        # Reads the server's output for as long as it runs, so that a full pipe never blocks it.
        def drain():
            for line in self.process.stdout:
                lines.put(line)
            lines.put(None)

        threading.Thread(target=drain, daemon=True).start()
        self.url = self._wait_for_url(lines, command)

    def _wait_for_url(self, lines, command):
        while True:
            try:
                line = lines.get(timeout=_start_timeout_s)
            except queue.Empty:
                self.stop()
                raise RuntimeError("localgate did not start within %gs (%s):\n%s" % (_start_timeout_s, " ".join(command), "".join(self.output)))
            if line is None:
                self.process.wait()
                raise RuntimeError("localgate exited with %s before listening (%s):\n%s" % (self.process.returncode, " ".join(command), "".join(self.output)))
            self.output.append(line)
            found = _listening.search(line)
            if found:
                return found.group(1)

    def stop(self):
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()


@pytest.fixture(scope="session")
def localgate(request):
    """The session's localgate: the one LOCALGATE_URL names, or one started for the session."""

    url = os.environ.get("LOCALGATE_URL")
    if url:
        server = Localgate(url, os.environ.get("AUTH_JWT_SECRET", ""))
        yield server
        server.close()
        return

    started = _Server(str(request.config.rootpath))
    server = Localgate(started.url, started.secret)
    try:
        yield server
    finally:
        server.close()
        started.stop()


@pytest.fixture
def localgate_instance(localgate, request):
    """A fresh instance for the test, deleted after it; options from the test's localgate marker."""

    marker = request.node.get_closest_marker("localgate")
    instance = localgate.instance(**(marker.kwargs if marker else {}))
    yield instance
    instance.delete()
