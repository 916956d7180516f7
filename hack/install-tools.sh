#!/usr/bin/env bash
# Builds minitask's local Kubernetes toolchain from the Go module proxy and caches
# it outside the repository, keyed by version, so fresh clones and CI reuse it.
# No prebuilt binaries are downloaded: everything is compiled from pinned module
# versions (hack/versions.env, and go.mod for controller-gen).
#
#   hack/install-tools.sh                 build whatever is missing (idempotent)
#   hack/install-tools.sh COMPONENT...    only these: kubernetes etcd kwok
#                                         golangci-lint kube-api-linter
#                                         controller-gen chromium
#   hack/install-tools.sh --print KEY     print a path: assets | bin
#
# Layout under ${MINITASK_CACHE:-~/.cache/minitask}:
#   kubernetes-<v>/   kube-apiserver kube-controller-manager kube-scheduler kubectl
#   etcd-<v>/         etcd
#   kwok-<v>/         kwok kwokctl
#   controller-gen-<v>/ controller-gen
#   golangci-lint-<v>/  golangci-lint
#   kube-api-linter-<v>/ golangci-lint-kube-api-linter (golangci-lint with
#                     the Kubernetes API linter built in)
#   assets-<k8s>-<etcd>/  symlinks for envtest's KUBEBUILDER_ASSETS
#   bin/              symlinks to all of the above (put on PATH)
#
# chromium is the one component not built here: the dashboard's browser tests
# (make test-e2e) drive Debian's chromium package, installed with apt-get when
# missing and running as root; elsewhere this says what to install.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=hack/versions.env
source "$repo/hack/versions.env"
cache=${MINITASK_CACHE:-$HOME/.cache/minitask}
export GOFLAGS=-mod=mod CGO_ENABLED=0

kube_dir=$cache/kubernetes-$KUBE_VERSION
etcd_dir=$cache/etcd-$ETCD_VERSION
kwok_dir=$cache/kwok-$KWOK_VERSION
assets_dir=$cache/assets-$KUBE_VERSION-$ETCD_VERSION
bin_dir=$cache/bin

controller_gen_version() {
  (cd "$repo" && go list -m -f '{{.Version}}' sigs.k8s.io/controller-tools)
}

case "${1:-}" in
  --print)
    case "${2:-}" in
      assets) echo "$assets_dir" ;;
      bin) echo "$bin_dir" ;;
      *) echo "usage: $0 --print assets|bin" >&2; exit 2 ;;
    esac
    exit 0 ;;
esac

log() { echo "install-tools: $*" >&2; }

# have DIR NAME...: true when every NAME is an executable in DIR.
have() {
  local dir=$1; shift
  for name in "$@"; do [ -x "$dir/$name" ] || return 1; done
}

# Builds into a temporary directory and renames it into place, so an interrupted
# build never leaves a half-filled cache entry that later runs would trust.
build_kubernetes() {
  have "$kube_dir" kube-apiserver kube-controller-manager kube-scheduler kubectl && return
  log "building Kubernetes v$KUBE_VERSION (first time only; about 10 minutes on 2 cores)"
  local work; work=$(mktemp -d "$cache/.kubernetes.XXXX")
  (
    cd "$work"
    go mod init minitask.local/toolchain/kubernetes >/dev/null 2>&1
    go mod edit -require="k8s.io/kubernetes@v$KUBE_VERSION"
    # k8s.io/kubernetes points each staging module at its own tree
    # (./staging/src/...), which only works inside its repository: pin the
    # published copies instead.
    local gomod; gomod=$(go mod download -json "k8s.io/kubernetes@v$KUBE_VERSION" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
    sed -n 's#^[[:space:]]*\(k8s.io/[a-z0-9-]*\) => ./staging/.*#\1#p' "$gomod" | while read -r m; do
      go mod edit -replace="$m=$m@v$KUBE_STAGING_VERSION"
    done
    local pkg=k8s.io/component-base/version
    local ldflags="-s -w -X $pkg.gitVersion=v$KUBE_VERSION -X $pkg.gitMajor=${KUBE_VERSION%%.*}"
    ldflags+=" -X $pkg.gitMinor=$(echo "$KUBE_VERSION" | cut -d. -f2) -X $pkg.gitTreeState=clean"
    ldflags+=" -X $pkg.buildDate=1970-01-01T00:00:00Z"
    mkdir -p out
    go build -trimpath -ldflags "$ldflags" -o out/ \
      k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
      k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubectl
  )
  rm -rf "$kube_dir" && mv "$work/out" "$kube_dir" && rm -rf "$work"
}

build_etcd() {
  have "$etcd_dir" etcd && return
  log "building etcd v$ETCD_VERSION"
  local work; work=$(mktemp -d "$cache/.etcd.XXXX")
  (
    cd "$work"
    go mod init minitask.local/toolchain/etcd >/dev/null 2>&1
    cat > main.go <<'GO'
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
GO
    go mod edit -require="go.etcd.io/etcd/server/v3@v$ETCD_VERSION"
    go mod tidy >/dev/null
    mkdir -p out && go build -trimpath -ldflags "-s -w" -o out/etcd .
  )
  rm -rf "$etcd_dir" && mv "$work/out" "$etcd_dir" && rm -rf "$work"
}

# go_install DIR MODULE@VERSION PKG...: for tools whose go.mod has no replace
# directives, so `go install pkg@version` builds them exactly as released.
go_install() {
  local dir=$1 version=$2; shift 2
  local names=()
  for p in "$@"; do names+=("$(basename "$p")"); done
  have "$dir" "${names[@]}" && return
  log "building ${names[*]} $version"
  local work; work=$(mktemp -d "$cache/.install.XXXX")
  for p in "$@"; do GOFLAGS= GOBIN="$work" go install -trimpath -ldflags "-s -w" "$p@$version"; done
  rm -rf "$dir" && mv "$work" "$dir"
}

build_controller_gen() {
  local v; v=$(controller_gen_version)
  local dir=$cache/controller-gen-$v
  have "$dir" controller-gen && { echo "$dir"; return; }
  log "building controller-gen $v (version from go.mod)"
  local work; work=$(mktemp -d "$cache/.controller-gen.XXXX")
  (cd "$repo" && GOFLAGS= go build -trimpath -o "$work/controller-gen" sigs.k8s.io/controller-tools/cmd/controller-gen)
  rm -rf "$dir" && mv "$work" "$dir"
  echo "$dir"
}

build_kwok() {
  go_install "$kwok_dir" "v$KWOK_VERSION" sigs.k8s.io/kwok/cmd/kwok sigs.k8s.io/kwok/cmd/kwokctl
  link "$kwok_dir"/*
}

build_golangci_lint() {
  local dir=$cache/golangci-lint-$GOLANGCI_LINT_VERSION
  go_install "$dir" "v$GOLANGCI_LINT_VERSION" github.com/golangci/golangci-lint/v2/cmd/golangci-lint
  link "$dir"/*
}

# link FILE...: expose FILEs in $bin_dir, the one directory callers put on PATH.
build_kube_api_linter() {
  local dir=$cache/kube-api-linter-$KUBE_API_LINTER_VERSION
  go_install "$dir" "$KUBE_API_LINTER_VERSION" sigs.k8s.io/kube-api-linter/cmd/golangci-lint-kube-api-linter
  link "$dir"/*
}

# install_chromium: Debian's chromium, for the dashboard's browser tests.
install_chromium() {
  command -v chromium > /dev/null && return
  if [ "$(id -u)" = 0 ] && command -v apt-get > /dev/null; then
    log "installing Debian's chromium package (for the dashboard's browser tests)"
    # An apt-get update only when the lists know no chromium yet.
    apt-cache show chromium > /dev/null 2>&1 || apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium > /dev/null
    return
  fi
  log "chromium is missing: install it (Debian and Ubuntu: sudo apt-get install chromium) or put it on PATH"
  exit 1
}

link() {
  mkdir -p "$bin_dir"
  for f in "$@"; do ln -sfn "$f" "$bin_dir/$(basename "$f")"; done
}

mkdir -p "$cache"
components=("$@")
[ ${#components[@]} -gt 0 ] || components=(kubernetes etcd kwok golangci-lint kube-api-linter controller-gen)
for c in "${components[@]}"; do
  case "$c" in
    kubernetes) build_kubernetes; link "$kube_dir"/* ;;
    etcd) build_etcd; link "$etcd_dir/etcd" ;;
    kwok) build_kwok ;;
    golangci-lint) build_golangci_lint ;;
    kube-api-linter) build_kube_api_linter ;;
    controller-gen) link "$(build_controller_gen)/controller-gen" ;;
    chromium) install_chromium ;;
    *) echo "install-tools: unknown component $c" >&2; exit 2 ;;
  esac
done

# envtest wants kube-apiserver, etcd and kubectl side by side.
if have "$kube_dir" kube-apiserver kubectl && have "$etcd_dir" etcd; then
  mkdir -p "$assets_dir"
  for f in kube-apiserver kubectl; do ln -sfn "$kube_dir/$f" "$assets_dir/$f"; done
  ln -sfn "$etcd_dir/etcd" "$assets_dir/etcd"
fi
log "ready: ${components[*]} (in $bin_dir)"
