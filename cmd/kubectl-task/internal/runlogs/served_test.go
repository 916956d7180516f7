package runlogs

import (
	"errors"
	"io"
	"strings"
	"testing"
)

func TestServedLog(t *testing.T) {
	tests := map[string]struct {
		log     string
		want    string
		wantErr error
	}{
		"the kubelet's message in place of the log": {
			log: "unable to retrieve container logs for containerd://0123", wantErr: errNotServed,
		},
		"a log": {log: "line 1\nline 2\n", want: "line 1\nline 2\n"},
		"a log that begins as the message does": {
			log: "unable to retrieve the cache\n", want: "unable to retrieve the cache\n",
		},
		"a log shorter than the message, a start of it": {log: "unable", want: "unable"},
		"an empty log": {},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			// One byte a read, as a stream may deliver it.
			got, err := io.ReadAll(newServedLog(io.NopCloser(&oneByteReader{strings.NewReader(tc.log)})))
			if !errors.Is(err, tc.wantErr) || string(got) != tc.want {
				t.Errorf("read %q (%v), want %q (%v)", got, err, tc.want, tc.wantErr)
			}
		})
	}
}

type oneByteReader struct{ r io.Reader }

func (o *oneByteReader) Read(p []byte) (int, error) { return o.r.Read(p[:min(1, len(p))]) }
