"""The package's build backend (PEP 517 and PEP 660), written with the standard library alone.

pip runs it from this folder (pyproject.toml's backend-path), so an install needs nothing fetched first, online or
offline, with any python3 from 3.8 on. It writes a pure-Python wheel of localgate_testing, an editable wheel that
points at this folder, and a source archive, reading the metadata from pyproject.toml.
"""

import base64
import hashlib
import io
import os
import re
import tarfile
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = "localgate_testing"
# Every archive entry gets one timestamp, so that a build of the same sources gives the same bytes.
EPOCH = (1980, 1, 1, 0, 0, 0)

_section = re.compile(r"^\[([A-Za-z0-9_.\-]+)\]$")
_entry = re.compile(r'^("(?:[^"\\]|\\.)*"|[A-Za-z0-9_\-]+)\s*=\s*(.+)$')
_string = re.compile(r'^"((?:[^"\\]|\\.)*)"$')
_table = re.compile(r"^\{(.*)\}$")


def _text(value, where):
    match = _string.match(value.strip())
    if not match:
        raise ValueError("pyproject.toml, %s: only \"strings\" and { key = \"string\" } tables are read here" % where)
    return re.sub(r'\\(["\\])', r"\1", match.group(1))


def read_pyproject(path=None):
    """The sections of pyproject.toml as dicts of strings (inline tables as dicts): the subset this file uses."""
    sections = {}
    current = None
    with open(path or os.path.join(ROOT, "pyproject.toml"), encoding="utf-8") as handle:
        for number, raw in enumerate(handle, 1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            where = "line %d" % number
            header = _section.match(line)
            if header:
                current = sections.setdefault(header.group(1), {})
                continue
            entry = _entry.match(line)
            if current is None or not entry:
                raise ValueError("pyproject.toml, %s: not a key = value line of a section" % where)
            key = _text(entry.group(1), where) if entry.group(1).startswith('"') else entry.group(1)
            value = entry.group(2).strip()
            table = _table.match(value)
            if table:
                pairs = [pair for pair in table.group(1).split(",") if pair.strip()]
                current[key] = dict((name.strip(), _text(text, where)) for name, text in (pair.split("=", 1) for pair in pairs))
            elif value.startswith("["):
                current[key] = [_text(item, where) for item in value.strip("[]").split(",") if item.strip()]
            else:
                current[key] = _text(value, where)
    return sections


def _metadata():
    sections = read_pyproject()
    project = sections["project"]
    name = project["name"]
    lines = [
        "Metadata-Version: 2.1",
        "Name: %s" % name,
        "Version: %s" % project["version"],
        "Summary: %s" % project["description"],
        "License: %s" % project["license"]["text"],
        "Requires-Python: %s" % project["requires-python"],
    ]
    entry_points = []
    for section, entries in sorted(sections.items()):
        if section.startswith("project.entry-points."):
            entry_points.append("[%s]" % section[len("project.entry-points."):])
            entry_points.extend("%s = %s" % item for item in sorted(entries.items()))
            entry_points.append("")
    return re.sub(r"[-_.]+", "_", name).lower(), project["version"], "\n".join(lines) + "\n", "\n".join(entry_points)


def _sources():
    folder = os.path.join(ROOT, PACKAGE)
    return [(PACKAGE + "/" + name, os.path.join(folder, name)) for name in sorted(os.listdir(folder)) if name.endswith(".py")]


def _write_wheel(wheel_directory, files):
    name, version, metadata, entry_points = _metadata()
    info = "%s-%s.dist-info" % (name, version)
    files = files + [
        (info + "/METADATA", metadata.encode("utf-8")),
        (info + "/WHEEL", b"Wheel-Version: 1.0\nGenerator: localgate_backend\nRoot-Is-Purelib: true\nTag: py3-none-any\n"),
        (info + "/entry_points.txt", entry_points.encode("utf-8")),
    ]
    record = []
    filename = "%s-%s-py3-none-any.whl" % (name, version)
    with zipfile.ZipFile(os.path.join(wheel_directory, filename), "w", zipfile.ZIP_DEFLATED) as wheel:
        for path, data in files:
            wheel.writestr(zipfile.ZipInfo(path, EPOCH), data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode("ascii")
            record.append("%s,sha256=%s,%d" % (path, digest, len(data)))
        record.append(info + "/RECORD,,")
        wheel.writestr(zipfile.ZipInfo(info + "/RECORD", EPOCH), ("\n".join(record) + "\n").encode("utf-8"))
    return filename


def _read(path):
    with open(path, "rb") as handle:
        return handle.read()


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    """PEP 517: the wheel of the package's modules."""
    return _write_wheel(wheel_directory, [(path, _read(source)) for path, source in _sources()])


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    """PEP 660: a wheel whose .pth file puts this folder on sys.path, so edits to the modules take effect at once."""
    return _write_wheel(wheel_directory, [(PACKAGE + ".pth", (ROOT + "\n").encode("utf-8"))])


def build_sdist(sdist_directory, config_settings=None):
    """PEP 517: a source archive that builds with this backend again."""
    name, version, metadata, _ = _metadata()
    top = "%s-%s" % (name, version)
    filename = top + ".tar.gz"
    files = [("pyproject.toml", _read(os.path.join(ROOT, "pyproject.toml"))),
             ("backend/localgate_backend.py", _read(os.path.abspath(__file__))),
             ("PKG-INFO", metadata.encode("utf-8"))] + [(path, _read(source)) for path, source in _sources()]
    with tarfile.open(os.path.join(sdist_directory, filename), "w:gz", format=tarfile.PAX_FORMAT) as archive:
        for path, data in files:
            member = tarfile.TarInfo(top + "/" + path)
            member.size = len(data)
            member.mode = 0o644
            archive.addfile(member, io.BytesIO(data))
    return filename


def _forget_own_bytecode():
    # Python caches this module's bytecode beside it as pip imports it (before this line runs): removed, so that an
    # install leaves the package's folder as it was shipped.
    cached = globals().get("__cached__")
    if cached and os.path.isfile(cached):
        os.remove(cached)
        try:
            os.rmdir(os.path.dirname(cached))
        except OSError:
            pass


_forget_own_bytecode()
