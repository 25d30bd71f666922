#!/usr/bin/env bash
# The whole test suite, exactly as CI runs it: formatting, vet, staticcheck,
# every test with the race detector, and a short fuzzing run.
set -euo pipefail
cd "$(dirname "$0")"

echo "== gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then
  echo "gofmt would change:"; echo "$unformatted"; exit 1
fi

echo "== go vet"
go vet ./...

echo "== staticcheck"
STATICCHECK_VERSION=v0.8.2
staticcheck=$(go env GOPATH)/bin/staticcheck
if ! "$staticcheck" -version 2>/dev/null | grep -q "(${STATICCHECK_VERSION#v})"; then
  go install "honnef.co/go/tools/cmd/staticcheck@$STATICCHECK_VERSION"
fi
"$staticcheck" ./...

echo "== fuzz (short)"
go test -run='^$' -fuzz='^FuzzNormalizeAnswer$' -fuzztime=10s .

echo "== go test -race"
go test -race -count=1 -timeout=10m ./...
