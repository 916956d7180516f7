package perobject

import (
	"context"
	"errors"
	"net/url"
	"syscall"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// TestUnservable tells a refusal of one object from an API server that
// cannot serve any.
func TestUnservable(t *testing.T) {
	task := schema.GroupResource{Group: "minitask.dev", Resource: "tasks"}
	tests := map[string]struct {
		err  error
		want bool
	}{
		"denied by a policy": {
			err: apierrors.NewForbidden(task, "blocked", errors.New("ValidatingAdmissionPolicy 'deny' denied request")),
		},
		"invalid": {err: apierrors.NewInvalid(schema.GroupKind{Group: "minitask.dev", Kind: "Task"}, "blocked", nil)},
		"a webhook that failed": {
			err: apierrors.NewInternalError(errors.New(`failed calling webhook "policy.example.com": connection refused`)),
		},
		"the API server overloaded":  {err: apierrors.NewTooManyRequests("slow down", 1), want: true},
		"the API server unavailable": {err: apierrors.NewServiceUnavailable("etcd is down"), want: true},
		"the API server timed out":   {err: apierrors.NewTimeoutError("took too long", 1), want: true},
		"the request timed out":      {err: apierrors.NewServerTimeout(task, "patch", 1), want: true},
		"the API server unreachable": {err: &url.Error{Op: "Patch", URL: "https://10.0.0.1", Err: syscall.ECONNREFUSED}, want: true},
		"the manager stopping":       {err: context.Canceled, want: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := Unservable(tc.err); got != tc.want {
				t.Errorf("Unservable(%v) = %t, want %t", tc.err, got, tc.want)
			}
		})
	}
}

func TestNamed(t *testing.T) {
	key := func(ns, name string) types.NamespacedName { return types.NamespacedName{Namespace: ns, Name: name} }
	tests := map[string]struct {
		failures Failures
		want     string
	}{
		"none": {Failures{}, ""},
		"one":  {Failures{key("a", "x"): errors.New("x refused")}, "; x refused"},
		"sorted by namespace, then name": {
			Failures{key("b", "a"): errors.New("b/a"), key("a", "z"): errors.New("a/z"), key("a", "b"): errors.New("a/b")},
			"; a/b; a/z; b/a"},
		"more than three": {
			Failures{key("a", "1"): errors.New("1"), key("a", "2"): errors.New("2"), key("a", "3"): errors.New("3"),
				key("a", "4"): errors.New("4"), key("a", "5"): errors.New("5")},
			"; 1; 2; 3; and 2 more"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := tc.failures.Named(); got != tc.want {
				t.Errorf("Named() = %q, want %q", got, tc.want)
			}
		})
	}
}
