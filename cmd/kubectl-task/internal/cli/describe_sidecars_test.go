package cli

import (
	"bytes"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	v1 "github.com/minitask-dev/minitask/apis/v1"
)

// TestDescribeSidecars: describe shows status.sidecars after the steps,
// and nothing for a run without sidecars.
func TestDescribeSidecars(t *testing.T) {
	tests := map[string]struct {
		sidecars []v1.SidecarState
		want     string
	}{
		"none": {},
		"a ready one and a crashing one": {
			sidecars: []v1.SidecarState{
				{Name: "db", State: v1.StepRunning, Ready: ptr.To(true)},
				{Name: "cache", State: v1.StepWaiting, Ready: ptr.To(false), RestartCount: ptr.To[int32](3), Reason: "CrashLoopBackOff"},
			},
			want: `
Sidecars:
  NAME    STATE     READY   RESTARTS   REASON
  db      Running   yes     0          ---
  cache   Waiting   no      3          CrashLoopBackOff
`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var out bytes.Buffer
			d := describer{w: newTabWriter(&out), now: time.Now()}
			d.sidecars(&v1.TaskRun{Status: v1.TaskRunStatus{Sidecars: tc.sidecars}})
			if err := d.w.Flush(); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, out.String()); diff != "" {
				t.Errorf("describe's sidecars (-want +got):\n%s", diff)
			}
		})
	}
}
