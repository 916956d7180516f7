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
lint: ## Run golangci-lint.
	@$(TOOLS) golangci-lint
	$(GOLANGCI_LINT) run ./...

.PHONY: test
test: manifests generate ## Run unit and envtest tests against a real kube-apiserver and etcd.
	@$(TOOLS) kubernetes etcd
	KUBEBUILDER_ASSETS="$(ASSETS)" go test ./... $(GOTESTFLAGS)

.PHONY: verify
verify: manifests generate fmt vet ## Regenerate everything and fail if that changed any file.
	go mod tidy
	@$(TOOLS) kubernetes
	$(KUBECTL) kustomize config/default > /dev/null
	@if [ -n "$$(git status --porcelain)" ]; then \
		echo "Regenerating changed these files; run 'make manifests generate fmt' and commit:"; \
		git status --porcelain; git --no-pager diff --stat; exit 1; \
	fi

##@ Build and run

.PHONY: build
build: ## Build the manager into bin/.
	go build -o bin/manager .

.PHONY: run
run: build ## Run the manager on a local cluster (kwok), show the samples; Ctrl-C tears it down.
	@$(TOOLS) kubernetes etcd kwok
	hack/local-cluster.sh up

.PHONY: bench
bench: ## Run the benchmarks.
	go test -run='^$$' -bench=. -benchmem ./...
