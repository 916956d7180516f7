#!/usr/bin/env bash
# Tests the local cluster's kwok stages without a cluster: renders their
# templates and runs their jq with kwok's own code (hack/kwok/stagetest, a
# module of its own so that the project's module does not depend on kwok).
set -euo pipefail
cd "$(dirname "$0")/stagetest"
exec go test ./... "$@"
