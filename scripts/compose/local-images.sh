#!/usr/bin/env bash
# Local stand-ins for the official images docker-compose.yml defaults to, for `make test-compose`
# on a machine that cannot pull from Docker Hub: a Debian bookworm base made with debootstrap
# from Debian's package registry and imported, and from it python, node, nginx, postgres and
# redis images built from Debian packages (scripts/compose/images/). Each image is rebuilt only
# when its inputs changed (a hash kept in its nginx-fleet.inputs label), so a warm run costs
# seconds. Prints the image names, one per line, as NAME=IMAGE.
# Environment: NGINX_FLEET_COMPOSE_CACHE (/var/cache/nginx-fleet-compose), DEBIAN_MIRROR.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cache="${NGINX_FLEET_COMPOSE_CACHE:-/var/cache/nginx-fleet-compose}"
mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
suite=bookworm
base_image=nginx-fleet-local/debian:bookworm
# Extra certificate authorities this machine trusts (a TLS-inspecting egress proxy, a company
# CA): the images trust them too, or pip, uv and npm inside a build could not reach registries.
extra_cas=/usr/local/share/ca-certificates

say() { printf 'local-images: %s\n' "$*" >&2; }

label_of() {
  docker image inspect --format '{{ index .Config.Labels "nginx-fleet.inputs" }}' "$1" 2>/dev/null || true
}

# The hash of everything that goes into the base: the debootstrap recipe, this script's
# version of it and the extra CAs.
base_inputs() {
  {
    echo "$suite $mirror minbase ca-certificates"
    sed -n '/^build_base()/,/^}/p' "${BASH_SOURCE[0]}"
    find "$extra_cas" -maxdepth 1 -name '*.crt' -type f -print0 2>/dev/null | sort -z | xargs -0r cat
  } | sha256sum | cut -c1-16
}

build_base() {
  local inputs="$1" rootfs="$cache/rootfs-$suite"
  say "debootstrap $suite (minbase) from $mirror into $rootfs"
  rm -rf "$rootfs"
  debootstrap --variant=minbase --include=ca-certificates "$suite" "$rootfs" "$mirror" >"$cache/debootstrap.log" 2>&1 || {
    tail -n 20 "$cache/debootstrap.log" >&2
    exit 1
  }
  cat >"$rootfs/etc/apt/sources.list" <<SOURCES
deb $mirror $suite main
deb $mirror $suite-updates main
deb ${mirror%/debian}/debian-security $suite-security main
SOURCES
  if compgen -G "$extra_cas/*.crt" >/dev/null; then
    cp "$extra_cas"/*.crt "$rootfs/usr/local/share/ca-certificates/"
  fi
  chroot "$rootfs" update-ca-certificates >/dev/null
  rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
  # Tools that keep a CA bundle of their own (uv, node) are pointed at the system's.
  tar -C "$rootfs" -c . | docker import \
    --change "LABEL nginx-fleet.inputs=$inputs" \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'ENV LANG=C.UTF-8' \
    --change 'ENV SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt' \
    --change 'ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt' \
    --change 'CMD ["bash"]' \
    - "$base_image" >/dev/null
  rm -rf "$rootfs"
}

# build_image NAME IMAGE: images/NAME/Dockerfile on the base, with images/NAME as its context
# (plus, for node, this machine's Node.js and npm).
build_image() {
  local name="$1" image="$2" context="$here/images/$1" inputs
  local base_id
  base_id="$(docker image inspect --format '{{.Id}}' "$base_image")"
  if [ "$name" = node ]; then
    context="$cache/node-context"
    rm -rf "$context"
    mkdir -p "$context"
    cp "$here/images/node/Dockerfile" "$context/"
    cp "$(readlink -f "$(command -v node)")" "$context/node"
    cp -a "$(dirname "$(readlink -f "$(command -v npm)")")/.." "$context/npm"
  fi
  inputs="$({
    echo "$base_id"
    if [ "$name" = node ]; then node --version; npm --version; fi
    find "$here/images/$name" -type f -print0 | sort -z | xargs -0 cat
  } | sha256sum | cut -c1-16)"
  if [ "$(label_of "$image")" = "$inputs" ]; then
    return 0
  fi
  say "building $image"
  docker build --quiet --build-arg "BASE_IMAGE=$base_image" --label "nginx-fleet.inputs=$inputs" \
    -t "$image" "$context" >/dev/null
}

mkdir -p "$cache"
inputs="$(base_inputs)"
if [ "$(label_of "$base_image")" != "$inputs" ]; then
  build_base "$inputs"
fi

declare -A images=(
  [python]=nginx-fleet-local/python:3.11-bookworm
  [node]=nginx-fleet-local/node:20-bookworm
  [nginx]=nginx-fleet-local/nginx:bookworm
  [postgres]=nginx-fleet-local/postgres:15-bookworm
  [redis]=nginx-fleet-local/redis:7-bookworm
)
for name in python node nginx postgres redis; do
  build_image "$name" "${images[$name]}"
done
for name in python node nginx postgres redis; do
  echo "$name=${images[$name]}"
done
