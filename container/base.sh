#!/usr/bin/env bash
# Makes a Node base image from Debian's packages alone, for machines that reach no container registry: a minbase
# bookworm from the mirror apt already uses, with this machine's own node, its headers and npm laid out where the
# official node image keeps them (/usr/local), so that the Containerfile builds on either.
# Usage: base.sh <image tag>. Prints the tag; does nothing when the tag exists already (the cache between runs).
set -euo pipefail

tag="$1"
if podman image exists "$tag"; then
    echo "$tag"
    exit 0
fi

node_bin="$(command -v node)"
node_root="$(cd "$(dirname "$(readlink -f "$node_bin")")/.." && pwd)"
npm_dir="$node_root/lib/node_modules/npm"
headers="$node_root/include/node"
[ -d "$npm_dir" ] || { echo "base.sh: no npm at $npm_dir" >&2; exit 1; }
[ -f "$headers/node.h" ] || { echo "base.sh: no Node headers at $headers (npm_config_nodedir needs them)" >&2; exit 1; }

# The mirror apt is configured with (deb822 or one-line sources), else Debian's own.
mirror="$(sed -n 's/^URIs: *\([^ ]*\).*/\1/p' /etc/apt/sources.list.d/*.sources 2> /dev/null | grep -v security | head -n 1 || true)"
if [ -z "$mirror" ]; then
    mirror="$(sed -n 's/^deb \(\[[^]]*\] \)\{0,1\}\([^ ]*\) bookworm .*/\2/p' /etc/apt/sources.list 2> /dev/null | head -n 1 || true)"
fi
mirror="${mirror:-http://deb.debian.org/debian}"

root="$(mktemp -d)"
trap 'rm -rf "$root"' EXIT
debootstrap --variant=minbase bookworm "$root" "$mirror" > "$root.log" 2>&1 || { cat "$root.log" >&2; rm -f "$root.log"; exit 1; }
rm -f "$root.log"

# node needs only libc, libstdc++ and libgcc_s, which minbase carries.
install -D -m 0755 "$node_bin" "$root/usr/local/bin/node"
mkdir -p "$root/usr/local/include" "$root/usr/local/lib/node_modules"
cp -a "$headers" "$root/usr/local/include/node"
cp -a "$npm_dir" "$root/usr/local/lib/node_modules/npm"
ln -s ../lib/node_modules/npm/bin/npm-cli.js "$root/usr/local/bin/npm"
ln -s ../lib/node_modules/npm/bin/npx-cli.js "$root/usr/local/bin/npx"
rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*

tar -C "$root" -c . | podman import --quiet --change 'CMD ["node"]' - "$tag" > /dev/null
echo "$tag"
