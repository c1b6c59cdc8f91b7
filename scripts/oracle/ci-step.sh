#!/bin/sh
# CI step for the oracle lane: installs what the build and the tests need (only when missing),
# builds the real kube-apiserver if it is not cached, then the oracle tests can run.
# Called from .ci/run; safe to rerun (each part is skipped when already done).
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
PACKAGES="golang-go rsync golang-github-modern-go-reflect2-dev etcd-server"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

missing=""
for p in $PACKAGES; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing="$missing $p"
done
if [ -n "$missing" ]; then
  echo "[oracle-ci] installing:$missing"
  $SUDO apt-get update -qq
  # shellcheck disable=SC2086
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
  # Debian may start the packaged etcd; the tests start their own on free ports.
  $SUDO service etcd stop >/dev/null 2>&1 || true
fi

"$HERE/build.sh"
