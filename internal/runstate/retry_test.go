package runstate_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/internal/runstate"
)

func TestRetryRules(t *testing.T) {
	tests := map[string]struct {
		retries      *int32
		retryOn      []v1.RetryReason
		wantAttempts int
		wantRetryOn  []v1.RetryReason
	}{
		"no retries, the default": {
			wantAttempts: 1, wantRetryOn: []v1.RetryReason{v1.RetryOnPodFailed},
		},
		"retries 0": {
			retries: ptr.To[int32](0), wantAttempts: 1, wantRetryOn: []v1.RetryReason{v1.RetryOnPodFailed},
		},
		"retries 2, StepFailed": {
			retries: ptr.To[int32](2), retryOn: []v1.RetryReason{v1.RetryOnStepFailed},
			wantAttempts: 3, wantRetryOn: []v1.RetryReason{v1.RetryOnStepFailed},
		},
		"retries 10, both, in the spec's order": {
			retries: ptr.To[int32](10), retryOn: []v1.RetryReason{v1.RetryOnStepFailed, v1.RetryOnPodFailed},
			wantAttempts: 11, wantRetryOn: []v1.RetryReason{v1.RetryOnStepFailed, v1.RetryOnPodFailed},
		},
		"negative retries, which the API refuses, allow the first": {
			retries: ptr.To[int32](-1), wantAttempts: 1, wantRetryOn: []v1.RetryReason{v1.RetryOnPodFailed},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			run := &v1.TaskRun{Spec: v1.TaskRunSpec{Retries: tc.retries, RetryOn: tc.retryOn}}
			if got := runstate.AttemptsAllowed(run); got != tc.wantAttempts {
				t.Errorf("AttemptsAllowed() = %d, want %d", got, tc.wantAttempts)
			}
			if diff := cmp.Diff(tc.wantRetryOn, runstate.RetryOn(run)); diff != "" {
				t.Errorf("RetryOn() (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDefaultRetryOnIsFresh pins that a caller changing the default it got
// does not change it for the next: the controller and kubectl task share it.
func TestDefaultRetryOnIsFresh(t *testing.T) {
	runstate.DefaultRetryOn()[0] = v1.RetryOnStepFailed
	if diff := cmp.Diff([]v1.RetryReason{v1.RetryOnPodFailed}, runstate.DefaultRetryOn()); diff != "" {
		t.Errorf("DefaultRetryOn() after a caller changed its copy (-want +got):\n%s", diff)
	}
}
