// Package stagetest tests the local cluster's kwok stages (hack/kwok/stages)
// without a cluster: it renders their templates and runs their jq
// expressions with kwok's own code, on Pods shaped as the controller builds
// them. It is a module of its own so that the project's module does not
// depend on kwok; run it with hack/kwok/test-stages.sh.
package stagetest
