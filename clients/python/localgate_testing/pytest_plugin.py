"""pytest fixtures for localgate: a server per session (or worker), a fresh instance per test.

Installing this folder (``pip install``) loads it through its entry point, named as the module, so a conftest's
``pytest_plugins = ["localgate_testing.pytest_plugin"]`` or ``-p localgate_testing.pytest_plugin`` beside it finds it
loaded and it loads once.

- ``localgate`` (session): a ``Localgate`` client. With ``LOCALGATE_URL`` and ``AUTH_JWT_SECRET`` set, it uses
  that server; otherwise it starts ``npx --no-install localgate start --memory --port 0`` in the rootdir (or
  ``LOCALGATE_COMMAND start --memory --port 0``) with a fresh secret, and stops it after the session.
- ``localgate_instance`` (function): a fresh ``Instance`` of the demo data, deleted after the test. Mark a test
  ``@pytest.mark.localgate(seed="none", fixture={...}, clock="2030-01-01T00:00:00Z", ids="sequential", pay=True)``
  to make it otherwise.
- ``localgate_receiver`` (function): a webhook ``Receiver`` on a free loopback port, with a minted secret, closed
  after the test: give its ``url`` and ``secret`` to ``set_webhooks``.

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
from .receiver import start_receiver

_listening = re.compile(r"localgate listening on (http://\S+)")
_start_timeout_s = float(os.environ.get("LOCALGATE_START_TIMEOUT", "120"))
_default_command = "npx --no-install localgate"
# npm's own failure (no localgate installed where pytest runs: a registry 404, or no network), not localgate's.
_npm_failed = re.compile(r"^npm (?:error|ERR!)", re.MULTILINE)


def pytest_configure(config):
    config.addinivalue_line("markers", "localgate(**options): how localgate_instance makes the test's instance (seed, fixture, clock, ids, pay)")


class _Server:
    """A localgate started for the session: its URL once it listens, stopped with its process group."""

    def __init__(self, root):
        self.root = root
        self.default = "LOCALGATE_COMMAND" not in os.environ
        command = shlex.split(os.environ.get("LOCALGATE_COMMAND", _default_command)) + ["start", "--memory", "--port", "0"]
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
                output = "".join(self.output)
                raise RuntimeError("localgate exited with %s before listening (%s):\n%s%s" % (self.process.returncode, " ".join(command), output, self._hint(output)))
            self.output.append(line)
            found = _listening.search(line)
            if found:
                return found.group(1)

    def _hint(self, output):
        """What to set where npm, run as the default command, found no localgate to start; nothing otherwise."""

        if not (self.default and _npm_failed.search(output)):
            return ""
        return (
            "\nLOCALGATE_COMMAND is not set, so the plugin ran `%s` in %s, and npm found no localgate to start there. "
            "Install it there (npm install --save-dev localgate), set LOCALGATE_COMMAND to a command that runs it "
            "(for example LOCALGATE_COMMAND=\"node path/to/localgate/bin/localgate.js\"), "
            "or set LOCALGATE_URL and AUTH_JWT_SECRET to use a server that is running." % (_default_command, self.root)
        )

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


@pytest.fixture
def localgate_receiver():
    """A webhook receiver for the test (its url and secret go to set_webhooks), closed after it."""

    receiver = start_receiver()
    yield receiver
    receiver.close()
