#!/usr/bin/env bash
# Runs minitask's benchmarks and writes the report (what `make bench` does).
# Each suite's `go test -bench` output goes to bin/bench/SUITE.txt, headed by
# the command and the load average it started under, then hack/benchreport
# turns them all into docs/benchmarks.md (the goals and a short section per
# suite, keeping the notes written by hand under each) and
# bin/bench/details.md (every table in full; bin/ is not committed).
#
#   hack/bench.sh                 every suite; writes docs/benchmarks.md
#   hack/bench.sh SUITE...        some of them; writes bin/bench/benchmarks.md,
#                                 with docs/benchmarks.md's notes
#
# Suites: conversion (the conversion handler in-process, against its floor,
# and its peak heap),
# envtest (conversion over HTTPS, LIST through conversion, the cold LIST
# after a kube-apiserver restart, v1beta1 write latency with and without
# conversion reviews, the storage migration, a manager's start with 10,000
# runs stored as v1: against a
# kube-apiserver and etcd on loopback), cluster
# (bin/manager on a local kwok cluster: throughput, latency, writes, memory,
# and the storage move by the platform's migrator and by the manager's own),
# node (what a step costs on a real node: a kubelet, containerd and runc,
# a TaskRun against bare Pods; then what a sidecar costs a TaskRun there;
# about 40 minutes on 2 cores; it needs
# Linux and root, and is skipped, saying why, where hack/real-node.sh check
# fails).
# Numbers mean something only on an otherwise idle machine: the report shows
# the load average each suite started under.
set -euo pipefail
cd "$(dirname "$0")/.."

all_suites=(conversion envtest cluster node)
suites=("$@")
report=bin/bench/benchmarks.md
if [ ${#suites[@]} -eq 0 ]; then
	suites=("${all_suites[@]}")
	report=docs/benchmarks.md
fi

# Each suite is one or more go test commands. Loads are bounded inside the
# benchmarks; the heavy ones ignore b.N and run once (-benchtime=1x).
commands() {
	case $1 in
	conversion)
		# Three counts, each result's median: the handler and its floors run
		# one after another, and a VM's speed drifts by tens of percent
		# within minutes; the median of three keeps one slow stretch from
		# deciding a ratio.
		echo "go test -run=^$ -bench=ConversionHandler -benchmem -count=3 -benchtime=0.5s -timeout=30m ./webhooks/conversion/"
		# One review each: the peak of a run is what it measures.
		echo "go test -run=^$ -bench=ConversionPeakHeap -benchtime=1x -timeout=30m ./webhooks/conversion/"
		;;
	envtest)
		echo "go test -run=^$ -bench=ConversionHTTPS|ListThroughConversion|WriteLatency -benchtime=1x -timeout=30m ./webhooks/conversion/"
		echo "go test -run=^$ -bench=ColdList -benchtime=1x -timeout=30m ./webhooks/conversion/"
		echo "go test -run=^$ -bench=StorageMigration -benchtime=1x -timeout=30m ./internal/storagemigration/"
		echo "go test -run=^$ -bench=ManagerStart -benchtime=1x -timeout=30m ./internal/timerepair/"
		;;
	cluster) echo "go test -tags=e2e -run=^$ -bench=. -benchtime=1x -timeout=40m ./test/e2e/" ;;
	node) echo "go test -tags=e2e,e2enode -run=^$ -bench=NodeStepCost|NodeSidecarCost -benchtime=1x -timeout=90m ./test/e2e/" ;;
	*)
		echo "unknown suite $1; the suites are: ${all_suites[*]}" >&2
		return 1
		;;
	esac
}

# Fail on an unknown suite before spending minutes on the others.
for suite in "${suites[@]}"; do commands "$suite" > /dev/null; done

hack/install-tools.sh kubernetes etcd kwok
# The node suite's real node, where this machine can run one: the kubelet,
# and containerd 2 for its EventedPLEG (Debian's containerd is checked by
# hack/real-node.sh check).
node_skipped=
for suite in "${suites[@]}"; do
	if [ "$suite" = node ]; then
		if node_skipped=$(hack/real-node.sh check); then
			hack/install-tools.sh kubelet containerd2
		else
			node_skipped=${node_skipped:-hack/real-node.sh check failed}
		fi
	fi
done
# The cluster benchmarks save the manager's heap profile here.
BENCH_PROFILE_DIR=$PWD/bin/bench/profiles
export BENCH_PROFILE_DIR
KUBEBUILDER_ASSETS=$(hack/install-tools.sh --print assets)
export KUBEBUILDER_ASSETS
PATH=$(hack/install-tools.sh --print bin):$PATH
make build

mkdir -p bin/bench
outputs=()
failed=()
for suite in "${suites[@]}"; do
	out=bin/bench/$suite.txt
	: > "$out"
	if [ "$suite" = node ] && [ -n "$node_skipped" ]; then
		printf '\n=== node: skipped: %s\n' "$node_skipped" | tee -a "$out"
		outputs+=("$out")
		continue
	fi
	while IFS= read -r cmd; do
		printf '\n=== %s: %s\n' "$suite" "$cmd"
		{
			echo "command: $cmd"
			echo "loadavg: $(cut -d' ' -f1-3 /proc/loadavg) before $suite"
		} >> "$out"
		# Word splitting is wanted: the commands hold no quoted arguments. A
		# failed command is reported at the end: the others still count.
		set -f
		# shellcheck disable=SC2086
		if ! $cmd 2>&1 | tee -a "$out"; then failed+=("$cmd"); fi
		set +f
	done < <(commands "$suite")
	outputs+=("$out")
done

# shellcheck source=hack/versions.env
. hack/versions.env
commit=$(git rev-parse --short HEAD)
if [ -n "$(git status --porcelain --untracked-files=no)" ]; then commit="$commit (with uncommitted changes)"; fi
go run ./hack/benchreport -o "$report" -notes docs/benchmarks.md -details bin/bench/details.md \
	-kube-version "$KUBE_VERSION" -commit "$commit" "${outputs[@]}"
echo "wrote $report and bin/bench/details.md"
if [ ${#failed[@]} -gt 0 ]; then
	printf 'these benchmarks failed; their numbers are missing from the report:\n' >&2
	printf '  %s\n' "${failed[@]}" >&2
	exit 1
fi
