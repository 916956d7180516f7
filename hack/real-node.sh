#!/usr/bin/env bash
# The local cluster's real node: a kubelet built from the pinned Kubernetes
# source (hack/install-tools.sh kubelet), containerd and runc from Debian, a
# network that stays inside each Pod (hack/realnode/cni) and images built here
# (hack/realnode/images), since no registry can be reached. It is created and
# deleted as one unit; everything it keeps is under one directory, and delete
# leaves no process, mount, network namespace or cgroup behind.
#
#   hack/real-node.sh start DIR   start the node (DIR: the cluster's state
#                                 directory; reads DIR/env for KUBECONFIG)
#   hack/real-node.sh stop DIR    stop it and remove what it left
#   hack/real-node.sh check       exit 0 if this machine can run it, else say why
#
# For the node fault tests (docs/lifecycle.md, "Node faults"), on a node
# that start started:
#   hack/real-node.sh restart DIR kubelet|containerd
#                                 stop that component (SIGTERM) and start it
#                                 again, as a service manager restarts it; the
#                                 node's containers run on meanwhile
#   hack/real-node.sh kill DIR kubelet|containerd
#                                 kill it (SIGKILL), as a crash does; it stays
#                                 down, and the containers run on
#   hack/real-node.sh halt DIR    the machine goes down: the kubelet and every
#                                 container's processes are killed; containerd
#                                 stays up, so that stop can still clean up
#
# hack/local-cluster.sh create --real-node calls start; delete calls stop.
#
# For experiments (docs/lifecycle.md, "What a step costs"), start takes:
#   MINITASK_NODE_CONTAINERD=PATH      another containerd binary (its shim and
#                                      ctr beside it are used too); a
#                                      containerd 2 gets containerd-v2.toml
#   MINITASK_NODE_FEATURE_GATES=A=true,B=false   the kubelet's featureGates
#   MINITASK_NODE_KUBELET_FLAGS="--vmodule=generic=5"   more flags for the
#                                      kubelet (its log's verbosity)
# and stop takes:
#   MINITASK_NODE_KEEP_LOGS=DIR        keep a copy of the node's logs in DIR
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
cache=${MINITASK_CACHE:-$HOME/.cache/minitask}
tools_bin=$("$repo/hack/install-tools.sh" --print bin)
export PATH="$tools_bin:$PATH"
if [ -n "${MINITASK_NODE_CONTAINERD:-}" ]; then
  PATH="$(dirname "$MINITASK_NODE_CONTAINERD"):$PATH"
fi

log() { printf '==> %s\n' "$*" >&2; }
die() { printf 'real-node: %s\n' "$*" >&2; exit 1; }

# The host sysctls the kubelet sets at start (container_manager_linux.go's
# kernel tunables); stop puts back what they were.
kubelet_sysctls=(vm.overcommit_memory vm.panic_on_oom kernel.panic kernel.panic_on_oops
  kernel.keys.root_maxkeys kernel.keys.root_maxbytes)

# check: why this machine cannot run a real node, if it cannot.
check() {
  [ "$(uname -s)" = Linux ] || { echo "the real node needs Linux (this is $(uname -s))"; return 1; }
  [ "$(id -u)" = 0 ] || { echo "the real node needs root (containerd, runc and the kubelet run as root)"; return 1; }
  local c
  for c in containerd containerd-shim-runc-v2 ctr runc ip; do
    command -v "$c" > /dev/null || { echo "the real node needs $c: hack/install-tools.sh node-runtime installs it"; return 1; }
  done
  grep -qw overlay /proc/filesystems || { echo "the real node needs the overlay filesystem"; return 1; }
  return 0
}

# free_port FROM: the first port from FROM up that nothing listens on.
free_port() {
  local p=$1
  while (exec 3<> "/dev/tcp/127.0.0.1/$p") 2> /dev/null; do p=$((p + 1)); done
  echo "$p"
}

# fill TEMPLATE OUT KEY=VALUE...: TEMPLATE with each KEY replaced by VALUE.
fill() {
  local template=$1 out=$2 kv text
  text=$(< "$template")
  shift 2
  for kv in "$@"; do text=${text//${kv%%=*}/${kv#*=}}; done
  printf '%s\n' "$text" > "$out"
}

# build_binaries DIR: the network plugin (as loopback and minitask-isolated)
# and steptool, statically linked, into DIR.
build_binaries() {
  local dir=$1
  mkdir -p "$dir/cni/bin"
  # -buildvcs=false: steptool's bytes key the images' cache, and must not
  # change with each commit.
  (cd "$repo" && CGO_ENABLED=0 go build -trimpath -buildvcs=false -o "$dir/cni/bin/minitask-isolated" ./hack/realnode/cni &&
    CGO_ENABLED=0 go build -trimpath -buildvcs=false -o "$dir/steptool" ./hack/realnode/steptool)
  ln -sfn minitask-isolated "$dir/cni/bin/loopback"
}

# images_archive DIR: the path of the images' archive, built once per input
# (the image builder's source, steptool, busybox, Go) and cached.
images_archive() {
  local dir=$1 key
  key=$( {
    cat "$repo"/hack/realnode/images/*.go "$repo/go.sum"
    sha256sum "$dir/steptool" /bin/busybox "$(go env GOROOT)/VERSION" | cut -d' ' -f1
  } | sha256sum | cut -c1-16)
  local out=$cache/node-images/$key.tar
  if [ ! -f "$out" ]; then
    log "Building the node's images (first time only)"
    mkdir -p "$cache/node-images"
    rm -f "$cache"/node-images/*.tar
    (cd "$repo" && go run ./hack/realnode/images -busybox /bin/busybox -steptool "$dir/steptool" \
      -goroot "$(go env GOROOT)" -o "$out.$$.tmp") && mv "$out.$$.tmp" "$out"
  fi
  echo "$out"
}

# wait_for WHAT TENTHS COMMAND...: runs COMMAND until it succeeds, for up to
# TENTHS/10 seconds.
wait_for() {
  local what=$1 tenths=$2 i
  shift 2
  for ((i = 0; i < tenths; i++)); do
    "$@" > /dev/null 2>&1 && return 0
    sleep 0.1
  done
  die "$what did not happen within $((tenths / 10))s"
}

# run_containerd NODE: starts the node's containerd, its output appended to
# its log, and waits until it answers.
run_containerd() {
  local node=$1
  containerd --config "$node/containerd.toml" >> "$node/logs/containerd.log" 2>&1 &
  echo $! > "$node/containerd.pid"
  wait_for "containerd's start" 300 ctr --address "$node/containerd.sock" version
}

# run_kubelet NODE: starts the node's kubelet (KUBECONFIG set), its output
# appended to its log.
run_kubelet() {
  local node=$1
  kubelet --config "$node/kubelet.yaml" --kubeconfig "$KUBECONFIG" --hostname-override=localhost \
    --root-dir "$node/kubelet" --cert-dir "$node/kubelet/pki" --v=2 ${MINITASK_NODE_KUBELET_FLAGS:-} \
    >> "$node/logs/kubelet.log" 2>&1 &
  echo $! > "$node/kubelet.pid"
}

start() {
  local state=$1 node=$1/node
  local why
  why=$(check) || die "$why"
  [ -f "$state/env" ] || die "no cluster in $state"
  # shellcheck source=/dev/null
  source "$state/env"
  [ -x "$tools_bin/kubelet" ] || "$repo/hack/install-tools.sh" kubelet
  mkdir -p "$node"/{cni/net.d,cni/data,kubelet,pod-logs,logs}

  local saved=() s
  for s in "${kubelet_sysctls[@]}"; do saved+=("$s=$(sysctl -n "$s")"); done
  printf '%s\n' "${saved[@]}" > "$node/sysctls"

  build_binaries "$node"
  local archive; archive=$(images_archive "$node")

  local containerd_config=containerd.toml
  if containerd --version | grep -q 'containerd/containerd/v2 '; then containerd_config=containerd-v2.toml; fi
  fill "$repo/hack/realnode/$containerd_config" "$node/containerd.toml" \
    NODE_DIR="$node" SANDBOX_IMAGE=minitask.local/pause:stand-in RUNC="$(command -v runc)"
  cat > "$node/cni/net.d/10-minitask-isolated.conflist" <<JSON
{
  "cniVersion": "1.0.0",
  "name": "minitask-isolated",
  "plugins": [
    {"type": "minitask-isolated", "subnet": "10.244.0.0/16", "dataDir": "$node/cni/data"}
  ]
}
JSON
  log "Starting containerd"
  run_containerd "$node"
  log "Loading the node's images"
  ctr --address "$node/containerd.sock" -n k8s.io images import --no-unpack=false "$archive" > /dev/null

  local kubelet_port healthz_port
  kubelet_port=$(free_port 10250)
  healthz_port=$(free_port $((kubelet_port + 1)))
  fill "$repo/hack/realnode/kubelet.yaml" "$node/kubelet.yaml" \
    NODE_DIR="$node" KUBELET_PORT="$kubelet_port" HEALTHZ_PORT="$healthz_port" CLIENT_CA="$MINITASK_CLUSTER_CA"
  if [ -n "${MINITASK_NODE_FEATURE_GATES:-}" ]; then
    local gate
    echo "featureGates:" >> "$node/kubelet.yaml"
    for gate in ${MINITASK_NODE_FEATURE_GATES//,/ }; do
      echo "  ${gate%%=*}: ${gate#*=}" >> "$node/kubelet.yaml"
    done
  fi
  log "Starting the kubelet (node localhost, 127.0.0.1:$kubelet_port)"
  # --hostname-override=localhost gives the node the Hostname address
  # localhost, which the API server prefers and resolves to 127.0.0.1: a
  # loopback --node-ip is refused and leaves the node with no address at all.
  run_kubelet "$node"
  cat >> "$state/env" <<ENV
MINITASK_NODE=real
MINITASK_CONTAINERD_ADDRESS=$node/containerd.sock
MINITASK_NODE_LOGS=$node/logs
ENV
  wait_for "the node's registration" 600 kubectl get node localhost
  kubectl wait --for=condition=Ready --timeout=60s node/localhost > /dev/null ||
    { tail -20 "$node/logs/kubelet.log" >&2; die "the node did not become Ready"; }
}

# component DIR NAME: checks that NAME is a component of the node started
# in DIR, and sources the cluster's settings.
component() {
  local state=$1 name=$2
  case "$name" in
    kubelet | containerd) ;;
    *) die "no component \"$name\": kubelet or containerd" ;;
  esac
  [ -d "$state/node" ] || die "no node in $state"
  # shellcheck source=/dev/null
  source "$state/env"
}

# restart DIR NAME: stops the component and starts it again.
restart() {
  component "$@"
  local node=$1/node name=$2
  stop_pid "$node/$name.pid"
  log "Restarting $name"
  "run_$name" "$node"
}

# kill_component DIR NAME: kills the component outright; it stays down.
kill_component() {
  component "$@"
  local f=$1/node/$2.pid
  [ -f "$f" ] || die "$2 is not running"
  kill -KILL "$(< "$f")" 2> /dev/null || true
  rm -f "$f"
}

# halt DIR: the kubelet (if still up) and every container's processes
# killed, as when the machine goes down; what is on its disk stays.
halt() {
  local node=$1/node id
  if [ -f "$node/kubelet.pid" ]; then kill_component "$1" kubelet; fi
  local sock=$node/containerd.sock
  for id in $(ctr --address "$sock" -n k8s.io tasks ls -q 2> /dev/null || true); do
    ctr --address "$sock" -n k8s.io tasks kill -a -s SIGKILL "$id" > /dev/null 2>&1 || true
  done
}

# stop_pid FILE: stops the process FILE names, SIGKILL after 10 s.
stop_pid() {
  local f=$1 pid i
  [ -f "$f" ] || return 0
  pid=$(< "$f")
  kill -TERM "$pid" 2> /dev/null || { rm -f "$f"; return 0; }
  for ((i = 0; i < 100; i++)); do
    kill -0 "$pid" 2> /dev/null || break
    sleep 0.1
  done
  kill -KILL "$pid" 2> /dev/null || true
  rm -f "$f"
}

stop() {
  local state=$1 node=$1/node
  [ -d "$node" ] || return 0
  stop_pid "$node/kubelet.pid"
  # The kubelet leaves its Pods running: kill and delete every container and
  # sandbox through containerd, so that runc removes their cgroups and
  # mounts; then whatever shim is left (they name our socket), then
  # containerd itself.
  local sock=$node/containerd.sock pid ids=() id
  if [ -S "$sock" ]; then
    mapfile -t ids < <(ctr --address "$sock" -n k8s.io containers ls -q 2> /dev/null || true)
    for id in "${ids[@]}"; do
      ctr --address "$sock" -n k8s.io tasks kill -a -s SIGKILL "$id" > /dev/null 2>&1 || true
    done
    for id in "${ids[@]}"; do
      ctr --address "$sock" -n k8s.io tasks delete -f "$id" > /dev/null 2>&1 || true
    done
    for pid in $(pgrep -f -- "-address $sock" || true); do
      pkill -KILL -P "$pid" 2> /dev/null || true
      kill -KILL "$pid" 2> /dev/null || true
    done
  fi
  stop_pid "$node/containerd.pid"
  # The network namespaces a crash kept from their Pods' teardown.
  local f ns
  for f in "$node"/cni/data/netns/*; do
    [ -f "$f" ] || continue
    ns=$(< "$f")
    if [ -n "$ns" ] && [ -e "$ns" ]; then
      umount "$ns" 2> /dev/null || true
      rm -f "$ns"
    fi
  done
  # Mounts under the node's directory, deepest first.
  awk -v d="$node/" 'index($5, d) == 1 { print $5 }' /proc/self/mountinfo | sort -r |
    while read -r m; do umount -l "$m" 2> /dev/null || true; done
  remove_cgroups "${ids[@]}"
  if [ -f "$node/sysctls" ]; then
    while IFS= read -r s; do sysctl -qw "$s" 2> /dev/null || true; done < "$node/sysctls"
  fi
  if [ -n "${MINITASK_NODE_KEEP_LOGS:-}" ] && [ -d "$node/logs" ]; then
    mkdir -p "$MINITASK_NODE_KEEP_LOGS" && cp -r "$node/logs" "$MINITASK_NODE_KEEP_LOGS/$(basename "$state")-$(date +%s)"
  fi
  rm -rf "$node"
}

# remove_cgroups ID...: the containers' cgroups, once their processes are
# gone. With the cgroupfs driver and no QoS cgroups, containerd puts each
# container's at /k8s.io/ID under every hierarchy; /k8s.io itself goes when
# no other node's container is left in it.
remove_cgroups() {
  local h id
  for h in /sys/fs/cgroup/*/; do
    [ -d "$h/k8s.io" ] || continue
    for id in "$@"; do
      if [ -d "$h/k8s.io/$id" ]; then rmdir "$h/k8s.io/$id" 2> /dev/null || true; fi
    done
    rmdir "$h/k8s.io" 2> /dev/null || true
  done
}

case "${1:-}" in
  start) start "${2:?usage: $0 start DIR}" ;;
  stop) stop "${2:?usage: $0 stop DIR}" ;;
  check) check ;;
  restart) restart "${2:?usage: $0 restart DIR kubelet|containerd}" "${3:?usage: $0 restart DIR kubelet|containerd}" ;;
  kill) kill_component "${2:?usage: $0 kill DIR kubelet|containerd}" "${3:?usage: $0 kill DIR kubelet|containerd}" ;;
  halt) halt "${2:?usage: $0 halt DIR}" ;;
  *) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2 ;;
esac
