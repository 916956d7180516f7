#!/usr/bin/env bash
# A local Kubernetes cluster for minitask that needs no downloads: etcd,
# kube-apiserver, kube-controller-manager (for garbage collection and the
# platform's storage version migration) and kube-scheduler from the pinned
# toolchain (hack/install-tools.sh), and either
# kwok playing the kubelet on a few fake nodes (hack/kwok/stages/, described
# in docs/local-cluster.md), where no container runs, or with --real-node one
# real node (hack/real-node.sh: a kubelet, containerd and runc, images built
# here), where steps really run. The manager runs as a local process; the API
# server calls its webhooks on 127.0.0.1 with a throwaway CA. Everything
# listens on 127.0.0.1 only.
#
#   hack/local-cluster.sh up [--real-node]
#                                  create the cluster, run the manager, apply the
#                                  samples and keep running until Ctrl-C, then
#                                  tear everything down (what `make run` does)
#   hack/local-cluster.sh create [--real-node] [--no-install] [--no-storage-version-migration]
#                                  create the cluster and install the CRDs and the
#                                  webhook configuration (rendered to
#                                  $MINITASK_MANIFESTS either way); prints KUBECONFIG.
#                                  --no-storage-version-migration: a cluster without
#                                  the platform's storage version migration (as
#                                  Kubernetes 1.30 to 1.36), so that the manager
#                                  migrates storage itself
#   hack/local-cluster.sh manager  run bin/manager in the foreground against it
#   hack/local-cluster.sh env      print its settings as KEY=value lines
#   hack/local-cluster.sh delete   stop it and remove its state
#
# Settings, from the environment:
#   MINITASK_CLUSTER       the cluster's name (minitask)
#   MINITASK_NODES         how many fake nodes (3; none with --real-node)
#   MINITASK_WEBHOOK_PORT  the manager's webhook port (the first free one from 9443)
#   MINITASK_PROBE_PORT    the manager's health port (the first free one from 8081)
#   MINITASK_MANAGER_ARGS  extra flags for bin/manager, e.g. --default-timeout=5m
#   MINITASK_CACHE         the toolchain cache (~/.cache/minitask); the
#                          cluster's state is in its clusters/NAME directory
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
name=${MINITASK_CLUSTER:-minitask}
state=${MINITASK_CACHE:-$HOME/.cache/minitask}/clusters/$name
env_file=$state/env
start=$(date +%s.%N)

if [ -t 2 ]; then bold=$'\033[1m' plain=$'\033[0m'; else bold="" plain=""; fi
log() { printf '%s==> %s%s\n' "$bold" "$*" "$plain" >&2; }
die() { printf 'local-cluster: %s\n' "$*" >&2; exit 1; }

# elapsed: seconds since this script started, e.g. 12.3.
elapsed() { awk -v s="$start" -v n="$(date +%s.%N)" 'BEGIN { printf "%.1f", n - s }'; }

# The pinned toolchain (hack/install-tools.sh) comes first on PATH.
tools_bin=$("$repo/hack/install-tools.sh" --print bin)
export PATH="$tools_bin:$PATH"

# tools: builds whatever the cluster needs from the toolchain and is missing.
tools() {
  local t
  for t in etcd kube-apiserver kube-controller-manager kube-scheduler kubectl kwok kwokctl; do
    if [ ! -x "$tools_bin/$t" ]; then
      "$repo/hack/install-tools.sh" kubernetes etcd kwok
      return
    fi
  done
}

# kwokctl_ runs kwokctl on our cluster and state directory. The proxy settings
# make any download kwokctl might attempt fail at once instead of reaching
# out: every binary it needs is passed explicitly, and requests to 127.0.0.1
# never go through a proxy.
kwokctl_() {
  KWOK_WORKDIR=$state/kwok HTTPS_PROXY=http://127.0.0.1:9 HTTP_PROXY=http://127.0.0.1:9 \
    NO_PROXY=127.0.0.1,localhost kwokctl --name "$name" "$@"
}

# step_logs_config FILE writes the kwok ClusterLogs that answers every
# container's log request with hack/kwok/step.log: no container runs in the
# local cluster, but the Pod logs API, kubectl logs and kubectl task logs
# work end to end. kwok needs the file's absolute path, which differs per
# checkout, so this is written at cluster creation.
step_logs_config() {
  cat > "$1" <<EOF
apiVersion: kwok.x-k8s.io/v1alpha1
kind: ClusterLogs
metadata:
  name: minitask-steps
spec:
  logs:
  - logsFile: $repo/hack/kwok/step.log
EOF
}

# kwokctl_config FILE REAL SVM writes hack/kwok/kwokctl.yaml with the API
# server's client certificate for kubelets added: kwokctl's admin
# certificate, which a real node's kubelet trusts (its client CA is the
# cluster's), so that Pod logs reach it. kwok's fake nodes ask for no
# certificate. With REAL true, the node lifecycle controller gets
# Kubernetes' own timing rather than kwokctl's, which stretches it five
# times over (its --heartbeat-factor, 5: a silent node is Unknown after
# 3m20s): a real kubelet's failure is noticed as on any cluster, after the
# default --node-monitor-grace-period of the pinned version (50s), checked
# every --node-monitor-period (5s). docs/lifecycle.md ("Node faults") states
# the bound on a lost node's runs that follows.
#
# The platform's storage version migration (storagemigration.k8s.io/v1, GA
# and on by default in 1.37) needs nothing set: kube-apiserver serves the
# API, and kube-controller-manager runs storage-version-migrator-controller
# beside the garbage collector, whose informers it reads. With SVM false the
# cluster is one without it, as Kubernetes 1.30 to 1.36 are by default: the
# API is turned off (--runtime-config) and so is the controller.
kwokctl_config() {
  local pki=$state/kwok/clusters/$name/pki
  {
    cat "$repo/hack/kwok/kwokctl.yaml"
    cat <<EOF
- name: kube-apiserver
  extraArgs:
  - key: kubelet-client-certificate
    value: $pki/admin.crt
  - key: kubelet-client-key
    value: $pki/admin.key
EOF
    if [ "$3" = false ]; then
      cat <<EOF
  - key: runtime-config
    value: storagemigration.k8s.io/v1=false
EOF
    fi
    if [ "$2" = true ] || [ "$3" = false ]; then
      echo "- name: kube-controller-manager"
      echo "  extraArgs:"
    fi
    if [ "$2" = true ]; then
      cat <<EOF
  - key: node-monitor-grace-period
    value: 50s
    override: true
  - key: node-monitor-period
    value: 5s
    override: true
EOF
    fi
    if [ "$3" = false ]; then
      cat <<EOF
  - key: controllers
    value: "*,-storage-version-migrator-controller"
EOF
    fi
  } > "$1"
}

# port_free PORT: true when nothing listens on 127.0.0.1:PORT.
# established waits until the named CRDs are Established. kubectl wait fails,
# rather than waits, on a CRD so new that its status has no conditions yet
# (".status.conditions accessor error"): wait for those first.
established() {
  local crd
  for crd in "$@"; do
    for _ in $(seq 60); do
      [ -n "$(kubectl get crd "$crd" -o jsonpath='{.status.conditions}' 2>/dev/null)" ] && break
      sleep 0.5
    done
  done
  kubectl wait --for=condition=Established --timeout=30s "${@/#/crd/}" > /dev/null
}

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# free_port FROM: the first port from FROM up that nothing listens on.
free_port() {
  local p=$1
  until port_free "$p"; do p=$((p + 1)); done
  echo "$p"
}

# http_ok PORT PATH: true when GET http://127.0.0.1:PORT/PATH answers 200.
http_ok() {
  (
    exec 3<>"/dev/tcp/127.0.0.1/$1" || exit 1
    printf 'GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' "$2" >&3
    read -r line <&3
    [[ $line == *" 200 "* ]]
  ) 2>/dev/null
}

# load_env: reads the settings that `create` wrote.
load_env() {
  [ -f "$env_file" ] || die "no cluster \"$name\"; run: $0 create"
  set -a
  # shellcheck source=/dev/null
  source "$env_file"
  set +a
}

# render_manifests PORT OUT: the CRDs (config/crd) and the webhook
# configuration (config/webhook/manifests.yaml), with every clientConfig's
# in-cluster service replaced by https://127.0.0.1:PORT and the same path,
# and our CA as caBundle.
render_manifests() {
  local port=$1 out=$2 ca
  ca=$(base64 < "$state/certs/ca.crt" | tr -d '\n')
  {
    kubectl kustomize "$repo/config/crd"
    if [ -f "$repo/config/webhook/manifests.yaml" ]; then
      echo ---
      cat "$repo/config/webhook/manifests.yaml"
    else
      echo "local-cluster: no config/webhook/manifests.yaml yet; installing no validating webhook" >&2
    fi
  } | awk -v base="https://127.0.0.1:$port" -v ca="$ca" '
    function flush() { print pad "caBundle: " ca; print pad "url: " base path; inside = 0 }
    inside {
      match($0, /^ */)
      if (RLENGTH > depth) { if ($1 == "path:") path = $2; next }
      flush()
    }
    /^ *service:$/ && previous ~ /^ *(- )?clientConfig:$/ {
      match($0, /^ */); depth = RLENGTH; pad = substr($0, 1, depth); path = ""; inside = 1
      previous = $0; next
    }
    { print; previous = $0 }
    END { if (inside) flush() }
  ' > "$out"
  grep -q 'namespace: system' "$out" && die "a webhook clientConfig in $out still names a service"
  return 0
}

create() {
  local install=true real=false svm=true arg
  for arg in "$@"; do
    case "$arg" in
      --no-install) install=false ;;
      --real-node) real=true ;;
      --no-storage-version-migration) svm=false ;;
      *) die "usage: $0 create [--real-node] [--no-install] [--no-storage-version-migration]" ;;
    esac
  done
  tools
  if $real; then
    local why
    why=$("$repo/hack/real-node.sh" check) || die "$why"
  fi
  if [ -d "$state" ]; then
    log "Deleting the old cluster \"$name\""
    delete_cluster
  fi
  mkdir -p "$state"

  local webhook_port=${MINITASK_WEBHOOK_PORT:-$(free_port 9443)}
  local probe_port=${MINITASK_PROBE_PORT:-$(free_port 8081)}
  [ "$webhook_port" != "$probe_port" ] || die "the webhook and probe ports are both $webhook_port"

  log "Creating cluster \"$name\" (kwokctl, binary runtime)"
  local stages=() f
  for f in "$repo"/hack/kwok/stages/*.yaml; do stages+=(-c "$f"); done
  step_logs_config "$state/kwok-logs.yaml"
  stages+=(-c "$state/kwok-logs.yaml")
  (cd "$repo" && go run hack/webhook-cert.go "$state/certs")
  kwokctl_config "$state/kwokctl.yaml" "$real" "$svm"
  # A real node's cluster has Kubernetes' heartbeats: kwok's fake nodes'
  # Leases last 40s, as a kubelet's do, not five times that, so that a fake
  # node beside the real one stays Ready under a 50s grace period.
  local factor=()
  if $real; then factor=(--heartbeat-factor=1); fi
  if ! kwokctl_ -c "$state/kwokctl.yaml" "${stages[@]}" create cluster \
      --kubeconfig="" "${factor[@]}" \
      --etcd-binary="$(readlink -f "$tools_bin/etcd")" \
      --kube-apiserver-binary="$(readlink -f "$tools_bin/kube-apiserver")" \
      --kube-controller-manager-binary="$(readlink -f "$tools_bin/kube-controller-manager")" \
      --kube-scheduler-binary="$(readlink -f "$tools_bin/kube-scheduler")" \
      --kwok-controller-binary="$(readlink -f "$tools_bin/kwok")" \
      --wait=60s > "$state/kwokctl.log" 2>&1; then
    cat "$state/kwokctl.log" >&2
    die "kwokctl create cluster failed"
  fi
  local kubeconfig=$state/kwok/clusters/$name/kubeconfig.yaml
  export KUBECONFIG=$kubeconfig
  # No addresses of kwokctl's (TEST-NET ones, where nothing answers): the
  # node-initialize Stage gives each node 127.0.0.1, where kwok serves logs.
  # kwok manages only the nodes it made (kwokctl.yaml), never the real one.
  if ! $real; then
    kwokctl_ scale node --replicas "${MINITASK_NODES:-3}" --param '.nodeIPs=[]' >> "$state/kwokctl.log" 2>&1 ||
      { cat "$state/kwokctl.log" >&2; die "kwokctl scale node failed"; }
  fi

  local etcd_port
  etcd_port=$(sed -n 's/^ *etcdPort: *//p' "$state/kwok/clusters/$name/kwok.yaml" | head -1)
  render_manifests "$webhook_port" "$state/manifests.yaml"
  cat > "$env_file" <<EOF
KUBECONFIG=$kubeconfig
MINITASK_CLUSTER=$name
MINITASK_STATE=$state
MINITASK_MANIFESTS=$state/manifests.yaml
MINITASK_WEBHOOK_PORT=$webhook_port
MINITASK_WEBHOOK_CERT_DIR=$state/certs
MINITASK_PROBE_ADDR=127.0.0.1:$probe_port
MINITASK_ETCD_ENDPOINT=http://127.0.0.1:$etcd_port
MINITASK_KWOK_LOGS=$state/kwok/clusters/$name/logs
MINITASK_CLUSTER_CA=$state/kwok/clusters/$name/pki/ca.crt
MINITASK_NODE=$($real && echo real || echo kwok)
MINITASK_STORAGE_VERSION_MIGRATION=$svm
EOF
  if $real; then
    log "Starting the real node (hack/real-node.sh)"
    "$repo/hack/real-node.sh" start "$state" || die "the real node did not start; its logs: $state/node/logs"
  fi
  if $install; then
    log "Installing the CRDs and webhook configuration (webhooks at https://127.0.0.1:$webhook_port)"
    kubectl apply --server-side --force-conflicts -f "$state/manifests.yaml" > /dev/null
    established tasks.minitask.dev taskruns.minitask.dev
  fi
  kubectl wait --for=condition=Ready --timeout=30s node --all > /dev/null
  log "Cluster \"$name\" is ready ($(elapsed)s)"
  echo "export KUBECONFIG=$kubeconfig"
}

delete_cluster() {
  local dir=$state/kwok/clusters/$name f
  if [ -d "$state/node" ]; then "$repo/hack/real-node.sh" stop "$state"; fi
  if [ -d "$dir" ] && ! kwokctl_ delete cluster --kubeconfig="$state/no-kubeconfig" > /dev/null 2>&1; then
    # What kwokctl would do: its components run detached, one pid file each.
    echo "local-cluster: kwokctl delete cluster failed; killing the cluster's processes" >&2
    for f in "$dir"/pids/*.pid; do
      if [ -f "$f" ]; then kill -KILL "$(cat "$f")" 2>/dev/null || true; fi
    done
  fi
  rm -rf "$state"
}

# manager_args: bin/manager's flags for our cluster.
manager_args() {
  # shellcheck disable=SC2206 # MINITASK_MANAGER_ARGS is split on purpose.
  args=(
    --kubeconfig="$KUBECONFIG"
    --webhook-host=127.0.0.1
    --webhook-port="$MINITASK_WEBHOOK_PORT"
    --webhook-cert-path="$MINITASK_WEBHOOK_CERT_DIR"
    --health-probe-bind-address="$MINITASK_PROBE_ADDR"
    --metrics-bind-address=0
    ${MINITASK_MANAGER_ARGS:-}
  )
}

build_manager() {
  (cd "$repo" && go build -o bin/manager .)
}

manager() {
  load_env
  [ -x "$repo/bin/manager" ] || build_manager
  manager_args
  exec "$repo/bin/manager" "${args[@]}"
}

# wait_ready PID: waits until the manager answers /readyz, failing if it exits.
wait_ready() {
  local pid=$1 port=${MINITASK_PROBE_ADDR##*:} i
  for ((i = 0; i < 300; i++)); do
    http_ok "$port" /readyz && return 0
    kill -0 "$pid" 2>/dev/null || die "the manager exited"
    sleep 0.1
  done
  die "the manager was not ready after 30s"
}

# run_samples: applies config/samples (Tasks first) and waits until every
# TaskRun has finished, printing when the first one succeeded.
run_samples() {
  local tasks=() runs=() f
  for f in "$repo"/config/samples/*.yaml; do
    case "$(basename "$f")" in
      *taskrun*) runs+=(-f "$f") ;;
      *) tasks+=(-f "$f") ;;
    esac
  done
  log "Applying the samples (config/samples, v1alpha1, v1beta1 and v1)"
  kubectl apply "${tasks[@]}"
  kubectl apply "${runs[@]}"

  local first="" lines pending i
  for ((i = 0; i < 600; i++)); do
    lines=$(kubectl get taskruns.v1beta1.minitask.dev --no-headers \
      -o 'custom-columns=S:.status.conditions[?(@.type=="Succeeded")].status')
    if [ -z "$first" ] && grep -qx True <<< "$lines"; then
      first=$(elapsed)
      log "First sample TaskRun Succeeded ($(elapsed)s)"
    fi
    pending=$(grep -cvx -e True -e False <<< "$lines" || true)
    if [ "$pending" = 0 ]; then
      log "Sample TaskRuns finished ($(elapsed)s)"
      break
    fi
    sleep 0.2
  done
  [ "$pending" = 0 ] || log "Some sample TaskRuns are still running after 120s"
  echo
  kubectl get taskruns.v1beta1.minitask.dev
  echo
  kubectl get taskruns.v1alpha1.minitask.dev
  echo
  kubectl get taskruns.v1.minitask.dev
}

next_steps() {
  local nodes log_note how_steps_run node_logs=""
  if [ "${MINITASK_NODE:-kwok}" = real ]; then
    nodes="the real node \"localhost\""
    log_note=""
    how_steps_run='Steps really run here, in containerd, with local stand-ins for alpine:3 and
golang:1.26 (no registry can be reached): see docs/local-cluster.md.'
    node_logs=" and $MINITASK_NODE_LOGS"
  else
    nodes="fake nodes: kwok plays the kubelet"
    log_note=" (kwok's stand-in lines)"
    how_steps_run='A step whose script ends with "exit N" fails with code N here, and "sleep N"
makes it run N seconds: see docs/local-cluster.md (make run NODE=real runs
them for real).'
  fi
  cat <<EOF

The cluster "$name" and the manager keep running until Ctrl-C. In another shell:

  export KUBECONFIG=$KUBECONFIG
  export PATH=$repo/bin:$tools_bin:\$PATH          # kubectl, and the kubectl task plugin

  kubectl get tr                                    # TaskRuns, as v1 (kubectl's default version)
  kubectl get taskruns.v1alpha1.minitask.dev        # the same, as the first release saw them
  kubectl get minitask                              # Tasks and TaskRuns
  kubectl describe tr hello-run
  kubectl get pods -o wide                          # one Pod per run, on $nodes
  kubectl apply -f config/samples/                  # or your own Tasks and TaskRuns

  kubectl task list                                 # the plugin: runs, newest first
  kubectl task describe flaky-run                   # steps, exit codes, events
  kubectl task logs flaky-run                       # the steps' logs, in order$log_note
  kubectl task start greet -p name=you --showlog    # start a run and follow its logs to its end
  kubectl task start build-from-source -w source=emptyDir --showlog   # bind a workspace
  kubectl get pod build-from-source-run-pod -o yaml # a workspace: one volume every step mounts
  kubectl task cancel RUN

$how_steps_run
Component logs: $MINITASK_KWOK_LOGS$node_logs

EOF
}

# teardown: what `up` runs on any exit (Ctrl-C, an error, the manager
# stopping): stop the manager, then delete the cluster and its state.
manager_pid=""
interrupted=false
teardown() {
  local code=$?
  trap - EXIT INT TERM
  # Whoever reads our output may be gone too (Ctrl-C on `make run | tee`):
  # keep tearing down even when writing fails.
  trap '' PIPE
  set +e
  echo >&2
  log "Tearing down"
  if [ -n "$manager_pid" ]; then
    # Ctrl-C reached the manager too (same process group): let it finish
    # shutting down, as a second signal would make it exit at once.
    $interrupted && wait_exit "$manager_pid" 50
    kill -TERM "$manager_pid" 2>/dev/null && wait_exit "$manager_pid" 100
    kill -KILL "$manager_pid" 2>/dev/null || true
  fi
  delete_cluster
  exit "$code"
}

# wait_exit PID TENTHS: waits up to TENTHS/10 seconds for PID to exit.
wait_exit() {
  local i
  for ((i = 0; i < $2; i++)); do
    kill -0 "$1" 2>/dev/null || return 0
    sleep 0.1
  done
  return 0
}

up() {
  trap teardown EXIT
  # Ctrl-C is how `up` is meant to end, so it is a success.
  trap 'interrupted=true; exit 0' INT
  trap 'exit 0' TERM

  [ -x "$repo/bin/manager" ] || build_manager
  create "$@" > /dev/null
  load_env

  log "Starting the manager (its logs are prefixed with \"manager |\")"
  manager_args
  # The prefixer ignores Ctrl-C so that the manager's last words still show.
  "$repo/bin/manager" "${args[@]}" > >(trap '' INT TERM; exec sed -u 's/^/manager | /') 2>&1 &
  manager_pid=$!
  wait_ready "$manager_pid"
  log "Manager ready ($(elapsed)s)"

  run_samples
  next_steps
  local code=0
  wait "$manager_pid" || code=$?
  # Ctrl-C reaches the manager too, and it may exit before our INT trap
  # runs: a clean exit means it was asked to stop, only a failure is an error.
  [ "$code" = 0 ] && exit 0
  die "the manager stopped (exit code $code)"
}

case "${1:-}" in
  up) shift; up "$@" ;;
  create) shift; create "$@" ;;
  manager) manager ;;
  env) load_env; cat "$env_file" ;;
  delete) delete_cluster ;;
  *)
    sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
    exit 2 ;;
esac
