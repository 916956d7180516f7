# minitask development targets (kubebuilder-style). `make help` lists them.
# The toolchain (kube-apiserver, etcd, kubectl, kwok, controller-gen,
# golangci-lint) is built from source by hack/install-tools.sh, pinned in
# hack/versions.env and cached outside the repository in ~/.cache/minitask.

SHELL := /usr/bin/env bash -o pipefail
.SHELLFLAGS := -ec
.DEFAULT_GOAL := help

TOOLS := hack/install-tools.sh
TOOLS_BIN := $(shell $(TOOLS) --print bin)
ASSETS := $(shell $(TOOLS) --print assets)
CONTROLLER_GEN := $(TOOLS_BIN)/controller-gen
GOLANGCI_LINT := $(TOOLS_BIN)/golangci-lint
KUBECTL := $(TOOLS_BIN)/kubectl
export PATH := $(TOOLS_BIN):$(PATH)

# Extra flags for go test, e.g. make test GOTESTFLAGS='-run TestConversion -v'.
GOTESTFLAGS ?=

# The manager's image, for docker-build and build-installer, e.g.
# make docker-build build-installer IMG=registry.example/minitask:v0.2.0
IMG ?= ghcr.io/minitask-dev/minitask:latest
CONTAINER_TOOL ?= docker

.PHONY: help
help: ## Show this help.
	@awk 'BEGIN {FS = ":.*##"; printf "Usage: make <target>\n"} /^[a-zA-Z_0-9-]+:.*?##/ { printf "  %-14s %s\n", $$1, $$2 } /^##@/ { printf "\n%s\n", substr($$0, 5) }' $(MAKEFILE_LIST)

##@ Development

.PHONY: tools
tools: ## Build or reuse the pinned local Kubernetes toolchain.
	$(TOOLS)

.PHONY: manifests
manifests: ## Generate the CRDs, RBAC role and webhook configuration from markers.
	@$(TOOLS) controller-gen
	$(CONTROLLER_GEN) rbac:roleName=manager-role crd webhook \
		paths="./apis/...;./controllers/...;./webhooks/...;./internal/..." \
		output:crd:artifacts:config=config/crd/bases

.PHONY: generate
generate: ## Generate the API types' deepcopy functions.
	@$(TOOLS) controller-gen
	$(CONTROLLER_GEN) object:headerFile="hack/boilerplate.go.txt" paths="./apis/..."

.PHONY: fmt
fmt: ## Run gofmt on the code.
	gofmt -l -w $$(git ls-files '*.go')

.PHONY: vet
vet: ## Run go vet.
	go vet ./...

.PHONY: lint
lint: lint-api ## Run golangci-lint and the Kubernetes API linter.
	@$(TOOLS) golangci-lint
	$(GOLANGCI_LINT) run --build-tags e2e,e2enode ./...

.PHONY: lint-api
lint-api: ## Run the Kubernetes API linter (sigs.k8s.io/kube-api-linter) over apis/.
	@$(TOOLS) kube-api-linter
	$(TOOLS_BIN)/golangci-lint-kube-api-linter run --config .golangci-kal.yml ./apis/...

.PHONY: test
test: manifests generate ## Run unit and envtest tests against a real kube-apiserver and etcd, and the local cluster's kwok stages.
	@$(TOOLS) kubernetes etcd
	KUBEBUILDER_ASSETS="$(ASSETS)" go test ./... $(GOTESTFLAGS)
	hack/kwok/test-stages.sh

.PHONY: test-e2e
test-e2e: build ## Run the end-to-end tests (test/e2e): each on a local cluster of its own, with bin/manager; the dashboard's in Chromium.
	@$(TOOLS) kubernetes etcd kwok chromium
	go test -tags e2e ./test/e2e/... -v -count=1 -timeout 30m $(GOTESTFLAGS)

# The real node needs Linux and root; the tests say so in one line and skip
# elsewhere (fail, with CI=true), so a failed install of the runtime is theirs
# to report.
.PHONY: test-e2e-node
test-e2e-node: build ## Run the real-node tests (test/e2e, TestNode*): steps in real containers on a real kubelet.
	@$(TOOLS) kubernetes etcd kwok kubelet
	@$(TOOLS) node-runtime || true
	go test -tags e2e,e2enode ./test/e2e/ -run '^TestNode' -v -count=1 -timeout 30m $(GOTESTFLAGS)

# The frozen releases the API must stay compatible with, oldest first.
FROZEN_RELEASES := test/e2e/testdata/first-release-crds.yaml,test/e2e/testdata/release-2-crds.yaml,test/e2e/testdata/release-4-crds.yaml,test/e2e/testdata/release-5-crds.yaml,test/e2e/testdata/release-6-crds.yaml

# The newest frozen release's served webhook paths (hack/webhook-paths writes
# them at a freeze): every path this tree's webhook configuration and CRD
# conversion name must be among them, so that a rolling update refuses
# nothing. Release 6 is the first to list them.
FROZEN_WEBHOOK_PATHS := test/e2e/testdata/release-6-webhook-paths.txt
# true: refuse a field the newest frozen release's schema lacks, which a
# rollback to it would prune. On from release 6, which keeps release 7's
# fields.
REQUIRE_KEPT_FIELDS := true

.PHONY: verify-api
verify-api: manifests ## Fail on a CRD or webhook path change that would break a stored object, a client or a rolling update of a frozen release.
	go run ./hack/verify-api -crds config/crd/bases -releases $(FROZEN_RELEASES) -exceptions hack/api-compat-exceptions.yaml \
		-webhooks config/webhook/manifests.yaml,config/crd/patches -served-paths "$(FROZEN_WEBHOOK_PATHS)" -require-kept=$(REQUIRE_KEPT_FIELDS)

.PHONY: verify
verify: manifests generate fmt vet verify-api ## Regenerate everything and fail if that changed any file.
	go mod tidy
	@$(TOOLS) kubernetes
	$(KUBECTL) kustomize config/default > /dev/null
	@if [ -n "$$(git status --porcelain)" ]; then \
		echo "Regenerating changed these files; run 'make manifests generate fmt' and commit:"; \
		git status --porcelain; git --no-pager diff --stat; exit 1; \
	fi

##@ Build and run

.PHONY: build
build: ## Build the manager and the kubectl task plugin into bin/.
	go build -o bin/manager .
	go build -o bin/kubectl-task ./cmd/kubectl-task

# Where go install puts binaries: $GOBIN, else $GOPATH/bin.
GOBIN_DIR = $(or $(shell go env GOBIN),$(shell go env GOPATH)/bin)

.PHONY: install-plugin
install-plugin: ## Install kubectl-task, and its completion helper, into $GOBIN for `kubectl task`.
	go install ./cmd/kubectl-task
	install -m 0755 cmd/kubectl-task/kubectl_complete-task "$(GOBIN_DIR)/kubectl_complete-task"

.PHONY: docker-build
docker-build: ## Build the manager's image $(IMG) (needs a Docker engine).
	$(CONTAINER_TOOL) build -t $(IMG) .

# build-installer renders config/default through a throwaway overlay whose
# images: entry sets $(IMG) (a name with a tag or a digest), so kubectl's own
# kustomize does it all.
.PHONY: build-installer
build-installer: manifests ## Write dist/install.yaml: config/default with the image $(IMG).
	@$(TOOLS) kubernetes
	@rm -rf dist/installer && mkdir -p dist/installer
	@img='$(IMG)'; name=$${img%%@*}; \
	if [ "$$name" != "$$img" ]; then set -- digest "$${img#*@}"; \
	else tag=$${img##*:}; name=$${img%:*}; \
		case $$tag in */*) name=$$img; tag=latest ;; esac; set -- newTag "$$tag"; fi; \
	printf 'resources:\n- ../../config/default\nimages:\n- name: ghcr.io/minitask-dev/minitask\n  newName: %s\n  %s: "%s"\n' \
		"$$name" "$$1" "$$2" > dist/installer/kustomization.yaml
	$(KUBECTL) kustomize dist/installer > dist/install.yaml
	@rm -rf dist/installer
	@echo "dist/install.yaml: $$(wc -c < dist/install.yaml) bytes, image $$(sed -n 's/^ *image: //p' dist/install.yaml)"

# NODE=real runs the steps on a real kubelet (hack/real-node.sh) instead of kwok.
NODE ?= kwok

# The Pod shape the manager of `make run` builds: chained, the manager's
# default (the steps of one Pod hand over one at a time).
# POD_SHAPE=init-containers shows the other shape.
POD_SHAPE ?= chained

.PHONY: run
run: build ## Run the manager on a local cluster, show the samples; Ctrl-C tears it down (NODE=real: a real kubelet).
ifeq ($(NODE),real)
	@$(TOOLS) kubernetes etcd kwok kubelet node-runtime
	MINITASK_MANAGER_ARGS="--pod-shape=$(POD_SHAPE) $${MINITASK_MANAGER_ARGS:-}" hack/local-cluster.sh up --real-node
else
	@$(TOOLS) kubernetes etcd kwok
	MINITASK_MANAGER_ARGS="--pod-shape=$(POD_SHAPE) $${MINITASK_MANAGER_ARGS:-}" hack/local-cluster.sh up
endif

# BENCH_SUITES picks some of hack/bench.sh's suites (conversion envtest
# cluster node); then the report goes to bin/bench/benchmarks.md instead. Either
# way the full tables go to bin/bench/details.md.
BENCH_SUITES ?=

.PHONY: bench
bench: ## Run every benchmark on this machine (idle, please: ~60 min on 2 cores, 35 of them the node suite) and write docs/benchmarks.md.
	hack/bench.sh $(BENCH_SUITES)

.PHONY: bench-check
bench-check: ## Build every benchmark and run the in-process ones once, as CI does (-short skips the rest, and runs the conversion handler at its small review sizes).
	@$(TOOLS) kubernetes etcd
	go vet -tags e2e,e2enode ./test/e2e/...
	KUBEBUILDER_ASSETS="$(ASSETS)" go test -short -run='^$$' -bench=. -benchtime=1x ./...
