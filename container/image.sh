#!/usr/bin/env bash
# Builds the localgate image from the Containerfile with podman (or docker where podman is missing).
# Usage: image.sh [build flags...], e.g. --build-arg BASE=<image>; the tag is localgate unless a -t flag names another.
set -euo pipefail
cd "$(dirname "$0")/.."

flags=()
# A registry reached through a private certificate authority: npm ci in the build trusts the CA this machine's npm
# trusts, handed in as a build secret and never copied into the image.
ca="${NODE_EXTRA_CA_CERTS:-}"
if [ -z "$ca" ]; then
    ca="$(npm config get cafile 2> /dev/null || true)"
fi
if [ -n "$ca" ] && [ -f "$ca" ]; then
    flags+=(--secret "id=npm_ca,src=$ca")
fi

case " $* " in
    *" -t "* | *" --tag "* | *" --tag="*) ;;
    *) flags+=(-t localgate) ;;
esac

if command -v podman > /dev/null; then
    # The docker format keeps the HEALTHCHECK, which the OCI format drops.
    exec podman build --format docker "${flags[@]}" "$@" -f Containerfile .
fi
exec docker build "${flags[@]}" "$@" -f Containerfile .
