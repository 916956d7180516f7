package controllers

import (
	"testing"

	"k8s.io/apimachinery/pkg/types"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/testing/wrappers"
)

func TestWriteLog(t *testing.T) {
	at := func(rv string) *v1.TaskRun {
		run := wrappers.TaskRun("ns", "run", "t").Obj()
		run.ResourceVersion = rv
		return run
	}
	var l writeLog
	if l.isStale(at("5")) {
		t.Error("a run never written is stale")
	}
	l.wrote(at("100"))
	tests := map[string]struct {
		rv   string
		want bool
	}{
		"older than the write":     {"99", true},
		"shorter, so older":        {"7", true},
		"the write itself":         {"100", false},
		"newer than the write":     {"101", false},
		"not comparable: not etcd": {"abc", false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := l.isStale(at(tc.rv)); got != tc.want {
				t.Errorf("isStale(resourceVersion %s) after a write at 100 = %t, want %t", tc.rv, got, tc.want)
			}
		})
	}
	l.forget(types.NamespacedName{Namespace: "ns", Name: "run"})
	if l.isStale(at("99")) {
		t.Error("a forgotten run is still stale")
	}
}
