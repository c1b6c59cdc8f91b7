#!/bin/sh
# The oracle lane in one command: build (or reuse) the real kube-apiserver, then run the API
# contract suite against the stand-in and the real server. CI=true makes a missing oracle fail.
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
"$HERE/build.sh"
cd "$HERE/../.."
exec node scripts/run-tests.mjs test/oracle
