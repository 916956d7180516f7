// Package apis_test checks what the API server itself enforces from the CRDs'
// schemas and CEL rules, through a real kube-apiserver.
package apis_test

import (
	"testing"

	"github.com/minitask-dev/minitask/internal/testing/testenv"
	"github.com/minitask-dev/minitask/webhooks"
)

var env *testenv.Env

func TestMain(m *testing.M) { testenv.Run(m, &env, webhooks.SetupWithManager) }
