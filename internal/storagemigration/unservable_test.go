package storagemigration

import (
	"context"
	"errors"
	"net/url"
	"syscall"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

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
			if got := unservable(tc.err); got != tc.want {
				t.Errorf("unservable(%v) = %t, want %t", tc.err, got, tc.want)
			}
		})
	}
}
