#!/bin/sh
# CI step for the oracle lane: installs what the build and the tests need (only when missing),
# builds the real kube-apiserver if it is not cached, then the oracle tests can run.
# Called from .ci/run; safe to rerun (each part is skipped when already done).
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
# What the build and the tests need comes from the one prerequisites list (lib/prerequisites/).
cd "$HERE/../.."
npm run --silent keelson -- local doctor --for oracle --install --quiet
# Debian may start the packaged etcd; the tests start their own on free ports.
service etcd stop >/dev/null 2>&1 || true

"$HERE/build.sh"
