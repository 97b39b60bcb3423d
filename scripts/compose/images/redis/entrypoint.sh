#!/bin/sh
# The official image builds redis with protected mode off (the container network is the
# boundary); Debian's default would refuse every other container without a password.
set -e
if [ "$1" = redis-server ]; then
  shift
  exec redis-server --protected-mode no "$@"
fi
exec "$@"
