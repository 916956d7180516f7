package cpustat

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseStat(t *testing.T) {
	for name, tc := range map[string]struct {
		stat   string
		want   process
		wantOK bool
	}{
		"a plain name": {
			stat:   "4242 (kube-apiserver) S 17 4242 17 0 -1 4194560 1 0 0 0 1250 250 0 0 20 0 9 0 100 0 0",
			want:   process{pid: 4242, comm: "kube-apiserver", ppid: 17, cpu: 15},
			wantOK: true,
		},
		"a name with a space and a parenthesis": {
			stat:   "7 (a (b) c) R 1 7 1 0 -1 0 0 0 0 0 3 2 0 0 20 0 1 0 5 0 0",
			want:   process{pid: 7, comm: "a (b) c", ppid: 1, cpu: 0.05},
			wantOK: true,
		},
		"cut short":  {stat: "7 (x) R 1 7 1"},
		"no command": {stat: "7 x R 1 7 1 0 -1 0 0 0 0 0 3 2 0 0 20 0 1 0 5 0 0"},
	} {
		t.Run(name, func(t *testing.T) {
			got, ok := parseStat([]byte(tc.stat))
			if ok != tc.wantOK {
				t.Fatalf("ok = %v, want %v", ok, tc.wantOK)
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(process{})); diff != "" {
				t.Errorf("parseStat (-want +got):\n%s", diff)
			}
		})
	}
}

// TestReadChildrenSeesNoneOfOthers checks that a test process that started
// none sees only itself, while Read sees every process.
func TestReadChildrenSeesNoneOfOthers(t *testing.T) {
	got := ReadChildren(t)
	if _, ok := got[Self]; !ok || len(got) != 1 {
		t.Errorf("ReadChildren = %v, want %q alone", got, Self)
	}
	if len(Read(t)) == 0 {
		t.Error("Read sees no process")
	}
}
