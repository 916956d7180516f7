#!/usr/bin/env bash
# Builds minitask's local Kubernetes toolchain from the Go module proxy and caches
# it outside the repository, keyed by version, so fresh clones and CI reuse it.
# No prebuilt binaries are downloaded: everything is compiled from pinned module
# versions (hack/versions.env, and go.mod for controller-gen).
#
#   hack/install-tools.sh                 build whatever is missing (idempotent)
#   hack/install-tools.sh COMPONENT...    only these: kubernetes etcd kwok
#                                         golangci-lint kube-api-linter
#                                         controller-gen kubelet node-runtime chromium
#                                         containerd2
#   hack/install-tools.sh --print KEY     print a path: assets | bin | containerd2
#
# kubelet and node-runtime are for the local cluster's real node
# (hack/local-cluster.sh create --real-node) and are not built by default:
# node-runtime is containerd, runc and busybox-static from Debian's packages,
# installed with apt-get where missing when run as root (elsewhere it says
# what to install); their versions are Debian's, not pinned here.
# containerd2 is containerd 2 (containerd, its runc shim and ctr), for the
# real node's EventedPLEG (MINITASK_NODE_CONTAINERD, hack/real-node.sh), which
# Debian's containerd 1.6 cannot serve; it is not linked into bin/, where it
# would take the place of Debian's.
#
# Layout under ${MINITASK_CACHE:-~/.cache/minitask}:
#   kubernetes-<v>/   kube-apiserver kube-controller-manager kube-scheduler kubectl
#   kubelet-<v>/      kubelet (the real node's)
#   etcd-<v>/         etcd
#   kwok-<v>/         kwok kwokctl
#   containerd-<v>/   containerd containerd-shim-runc-v2 ctr (containerd 2)
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
kubelet_dir=$cache/kubelet-$KUBE_VERSION
etcd_dir=$cache/etcd-$ETCD_VERSION
kwok_dir=$cache/kwok-$KWOK_VERSION
assets_dir=$cache/assets-$KUBE_VERSION-$ETCD_VERSION
containerd2_dir=$cache/containerd-$CONTAINERD2_VERSION
bin_dir=$cache/bin

controller_gen_version() {
  (cd "$repo" && go list -m -f '{{.Version}}' sigs.k8s.io/controller-tools)
}

case "${1:-}" in
  --print)
    case "${2:-}" in
      assets) echo "$assets_dir" ;;
      bin) echo "$bin_dir" ;;
      containerd2) echo "$containerd2_dir" ;;
      *) echo "usage: $0 --print assets|bin|containerd2" >&2; exit 2 ;;
    esac
    exit 0 ;;
esac

log() { echo "install-tools: $*" >&2; }

# have DIR NAME...: true when every NAME is an executable in DIR.
have() {
  local dir=$1; shift
  for name in "$@"; do [ -x "$dir/$name" ] || return 1; done
}

# build_kube DIR CMD...: builds k8s.io/kubernetes/cmd/CMD... at KUBE_VERSION
# into DIR. It builds into a temporary directory and renames it into place,
# so an interrupted build never leaves a half-filled cache entry that later
# runs would trust.
build_kube() {
  local dir=$1; shift
  have "$dir" "$@" && return
  local pkgs=() c
  for c in "$@"; do pkgs+=("k8s.io/kubernetes/cmd/$c"); done
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
    go build -trimpath -ldflags "$ldflags" -o out/ "${pkgs[@]}"
  )
  rm -rf "$dir" && mv "$work/out" "$dir" && rm -rf "$work"
}

build_kubernetes() {
  have "$kube_dir" kube-apiserver kube-controller-manager kube-scheduler kubectl ||
    log "building Kubernetes v$KUBE_VERSION (first time only; about 10 minutes on 2 cores)"
  build_kube "$kube_dir" kube-apiserver kube-controller-manager kube-scheduler kubectl
}

build_kubelet() {
  have "$kubelet_dir" kubelet || log "building the kubelet v$KUBE_VERSION (first time only; a few minutes)"
  build_kube "$kubelet_dir" kubelet
}

# install_node_runtime: what the real node runs Pods with. Debian's
# containerd (1.6 on bookworm) speaks CRI v1, which the kubelet needs;
# busybox-static is the shell of the node's locally built images.
install_node_runtime() {
  local missing=() cmd pkg
  for cmd in containerd:containerd ctr:containerd runc:runc ip:iproute2; do
    command -v "${cmd%%:*}" > /dev/null || missing+=("${cmd#*:}")
  done
  # The images' shell is /bin/busybox, which only busybox-static installs
  # statically linked (the busybox package's needs the host's libc).
  dpkg-query -W -f='${Status}' busybox-static 2> /dev/null | grep -q 'install ok installed' ||
    missing+=(busybox-static)
  [ ${#missing[@]} -eq 0 ] && return
  mapfile -t missing < <(printf '%s\n' "${missing[@]}" | sort -u)
  apt_install "the real node" "${missing[@]}"
}

# apt_install FOR PACKAGE...: installs Debian's PACKAGEs, which FOR needs,
# with apt-get when run as root; elsewhere says what to install and fails.
# The package lists are updated only when they do not know a package yet.
apt_install() {
  local for=$1; shift
  if [ "$(id -u)" != 0 ] || ! command -v apt-get > /dev/null; then
    log "$for needs these Debian packages: $*; install them (as root: apt-get install $*)"
    return 1
  fi
  log "installing $* for $for (apt-get)"
  local p
  for p in "$@"; do
    apt-cache show "$p" > /dev/null 2>&1 || { apt-get update -qq; break; }
  done
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" > /dev/null
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
  apt_install "the dashboard's browser tests" chromium || exit 1
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
    kubelet) build_kubelet; link "$kubelet_dir/kubelet" ;;
    node-runtime) install_node_runtime ;;
    etcd) build_etcd; link "$etcd_dir/etcd" ;;
    kwok) build_kwok ;;
    containerd2)
      go_install "$containerd2_dir" "v$CONTAINERD2_VERSION" github.com/containerd/containerd/v2/cmd/containerd \
        github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2 github.com/containerd/containerd/v2/cmd/ctr ;;
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
