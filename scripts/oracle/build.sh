#!/bin/sh
# Builds kube-apiserver and kube-controller-manager 1.20.2 from Debian's `kubernetes` source
# package (the oracle for the local API stand-in) and caches them outside the repository.
# Idempotent: exits at once when the cached binaries exist. Recipe and reasons:
# /work/shared/notes/kubernetes-api-facts.md §1.2 (reflect2 swap and rsync are required).
#
# Environment:
#   KEELSON_ORACLE_DIR   cache folder (default /var/cache/keelson/kube-apiserver-1.20.2 when that is
#                        writable, else ~/.cache/keelson/kube-apiserver-1.20.2; test/support/oracle.ts
#                        looks in the same places)
#   KEELSON_ORACLE_SCRATCH  build tree (default $KEELSON_ORACLE_DIR/build, ~2.2 GB, removed after success
#                        unless KEELSON_ORACLE_KEEP_SCRATCH=1)
set -eu

VERSION=1.20.2
default_dir() {
  if mkdir -p /var/cache/keelson 2>/dev/null && [ -w /var/cache/keelson ]; then
    echo "/var/cache/keelson/kube-apiserver-$VERSION"
  else
    echo "$HOME/.cache/keelson/kube-apiserver-$VERSION"
  fi
}
DIR=${KEELSON_ORACLE_DIR:-$(default_dir)}
SCRATCH=${KEELSON_ORACLE_SCRATCH:-$DIR/build}
BINARIES="kube-apiserver kube-controller-manager"

say() { printf '[oracle-build %s] %s\n' "$(date -u +%H:%M:%S)" "$*"; }

cached() {
  for b in $BINARIES; do [ -x "$DIR/bin/$b" ] || return 1; done
}

if cached; then
  say "cached binaries present in $DIR/bin, nothing to do"
  exit 0
fi

for tool in go rsync make apt-get tar; do
  command -v "$tool" >/dev/null 2>&1 || { say "missing tool: $tool (run scripts/oracle/ci-step.sh or apt-get install golang-go rsync)"; exit 1; }
done
REFLECT2_SRC=/usr/share/gocode/src/github.com/modern-go/reflect2
[ -f "$REFLECT2_SRC/reflect2.go" ] || { say "missing $REFLECT2_SRC (apt-get install golang-github-modern-go-reflect2-dev)"; exit 1; }

started=$(date +%s)
mkdir -p "$DIR/bin" "$SCRATCH/apt/lists/partial" "$SCRATCH/apt/parts" "$SCRATCH/home"

# A private apt configuration with deb-src entries, so the system's apt state is untouched.
say "fetching the source package list (deb-src)"
for f in /etc/apt/sources.list.d/*.sources; do
  [ -f "$f" ] || continue
  sed 's/^Types: deb$/Types: deb-src/' "$f" > "$SCRATCH/apt/parts/$(basename "$f")"
done
APT_OPTS="-o Dir::Etc::SourceList=/dev/null -o Dir::Etc::SourceParts=$SCRATCH/apt/parts -o Dir::State::Lists=$SCRATCH/apt/lists -o Debug::NoLocking=1"
# shellcheck disable=SC2086
apt-get $APT_OPTS -qq update

cd "$SCRATCH"
if ! ls kubernetes_*.orig.tar.gz >/dev/null 2>&1; then
  say "downloading Debian source package kubernetes"
  # shellcheck disable=SC2086
  apt-get $APT_OPTS -qq source --download-only kubernetes
fi
TREE="$SCRATCH/kubernetes-$VERSION"
if [ ! -d "$TREE/cmd/kube-apiserver" ]; then
  say "unpacking the source"
  rm -rf "$TREE"
  tar xzf kubernetes_*.orig.tar.gz
fi

# The vendored reflect2 v1.0.1 crashes under Go >= 1.18 (SIGSEGV on the first custom resource
# create); Debian's packaged reflect2 works.
say "swapping vendored reflect2 for Debian's"
rm -f "$TREE"/vendor/github.com/modern-go/reflect2/*.go "$TREE"/vendor/github.com/modern-go/reflect2/*.s
cp "$REFLECT2_SRC"/*.go "$TREE/vendor/github.com/modern-go/reflect2/"
cp "$REFLECT2_SRC"/*.s "$TREE/vendor/github.com/modern-go/reflect2/" 2>/dev/null || true

mkdir -p "$TREE/.go/src/k8s.io"
ln -sfn ../../.. "$TREE/.go/src/k8s.io/kubernetes"

say "building $BINARIES (nice -n 19, about 3 min on 2 idle cores)"
cd "$TREE"
GOPATH="$TREE/.go" CGO_ENABLED=0 HOME="$SCRATCH/home" \
  nice -n 19 make WHAT="cmd/kube-apiserver cmd/kube-controller-manager"

for b in $BINARIES; do
  src=$(find "$TREE/_output" -type f -name "$b" -perm -u+x | head -n 1)
  [ -n "$src" ] || { say "build finished but $b was not found under _output"; exit 1; }
  cp "$src" "$DIR/bin/$b.tmp" && mv "$DIR/bin/$b.tmp" "$DIR/bin/$b"
done
printf '%s\n' "$VERSION" > "$DIR/VERSION"

if [ "${KEELSON_ORACLE_KEEP_SCRATCH:-0}" != 1 ]; then
  say "removing the build tree"
  rm -rf "$SCRATCH"
fi
say "done in $(( $(date +%s) - started )) s: $DIR/bin"
