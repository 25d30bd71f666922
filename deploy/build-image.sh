#!/usr/bin/env bash
# Builds the hitl container image FROM scratch, with nothing from a registry:
#
#   deploy/build-image.sh [tag]           # default tag: hitl:latest; podman, else docker
#   deploy/build-image.sh --rootfs DIR    # only the image's files, into DIR
#
# The binary is static (CGO_ENABLED=0: the SQLite driver is pure Go), holds
# the time zone database (escalation's business hours), and is stamped with
# the version, commit and date that `hitl version` prints. The host's CA
# bundle goes in /etc/ssl/certs, for Slack, SMTP, webhooks and Web Push.
set -euo pipefail
cd "$(dirname "$0")/.."

rootfs() {
  local dir=$1
  local commit date version
  commit=$(git rev-parse HEAD 2>/dev/null || echo unknown)
  date=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  version=${HITL_VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)}
  mkdir -p "$dir/data" "$dir/etc/ssl/certs"
  CGO_ENABLED=0 go build -trimpath -tags timetzdata \
    -ldflags "-s -w -X main.version=$version -X main.commit=$commit -X main.date=$date" \
    -o "$dir/hitl" ./cmd/hitl
  local ca=/etc/ssl/certs/ca-certificates.crt
  if [ -f "$ca" ]; then
    cp "$ca" "$dir/etc/ssl/certs/ca-certificates.crt"
  else
    echo "build-image.sh: no $ca on this host: the image will reach no https server" >&2
    : > "$dir/etc/ssl/certs/ca-certificates.crt"
  fi
}

if [ "${1:-}" = "--rootfs" ]; then
  rootfs "${2:?--rootfs needs a directory}"
  exit 0
fi

tag=${1:-hitl:latest}
rm -rf deploy/rootfs
trap 'rm -rf deploy/rootfs' EXIT
rootfs deploy/rootfs
if command -v podman >/dev/null; then
  # --format docker keeps HEALTHCHECK, which the OCI format has no field for.
  podman build --format docker -t "$tag" -f deploy/Dockerfile deploy
else
  docker build -t "$tag" -f deploy/Dockerfile deploy
fi
