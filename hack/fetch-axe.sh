#!/usr/bin/env bash
# Fetches axe-core, the accessibility engine the dashboard's browser tests
# inject into each page (test/e2e/dashboard_test.go), from npm at a pinned
# version, checks it against the pinned integrity, and writes axe.min.js and
# its licence to test/e2e/testdata/axe/. The files are committed; this script
# is how they were made, and how to move to another version: change both pins,
# run it, commit the result.
set -euo pipefail
cd "$(dirname "$0")/.."

version=4.14.1
integrity=sha512-FHfa+lmNjQZfJz1q8wKqIDwC6DExcHt/pkjNQb09a3NPjCKg2rhu5qb2S4r76ASyFNNtuFooJpZe37OgudVGtQ==

out=test/e2e/testdata/axe
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

(cd "$work" && npm pack --silent "axe-core@$version" > /dev/null)
tarball=$work/axe-core-$version.tgz
got=sha512-$(openssl dgst -sha512 -binary "$tarball" | base64 -w0)
if [ "$got" != "$integrity" ]; then
	echo "axe-core $version: integrity $got, want $integrity" >&2
	exit 1
fi
tar -xzf "$tarball" -C "$work" package/axe.min.js package/LICENSE
mkdir -p "$out"
cp "$work/package/axe.min.js" "$out/axe.min.js"
cp "$work/package/LICENSE" "$out/LICENSE"
echo "axe-core $version ($integrity) -> $out/axe.min.js, $out/LICENSE"
