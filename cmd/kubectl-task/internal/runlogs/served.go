package runlogs

import (
	"errors"
	"io"
	"strings"
)

// notServedText begins what a kubelet sends, with a success, in place of a
// container's log that it cannot read now (its container runtime
// restarting, say): "unable to retrieve container logs for
// containerd://ID". Printed, it would read as the step's own line.
const notServedText = "unable to retrieve container logs for "

// errNotServed says that a kubelet sent notServedText in place of the log.
var errNotServed = errors.New("the kubelet could not retrieve the container's log")

// servedLog is a log stream that reports errNotServed, and no byte, when
// the kubelet sent notServedText in its place.
type servedLog struct {
	io.ReadCloser
	checked, notServed bool
	// head holds the bytes read to check, not yet returned; err is what
	// reading them ended with.
	head []byte
	err  error
}

func newServedLog(r io.ReadCloser) *servedLog { return &servedLog{ReadCloser: r} }

// check reads as much of the log's start as tells whether it is
// notServedText: a byte that differs ends the check, so a log that is not
// waits for no more than its first byte.
func (s *servedLog) check() error {
	if !s.checked {
		s.checked = true
		buf := make([]byte, len(notServedText))
		for len(s.head) < len(notServedText) && strings.HasPrefix(notServedText, string(s.head)) {
			n, err := s.ReadCloser.Read(buf[:len(notServedText)-len(s.head)])
			s.head = append(s.head, buf[:n]...)
			if err != nil {
				s.err = err
				break
			}
		}
		s.notServed = string(s.head) == notServedText
	}
	if s.notServed {
		return errNotServed
	}
	return nil
}

func (s *servedLog) Read(p []byte) (int, error) {
	if err := s.check(); err != nil {
		return 0, err
	}
	if len(s.head) > 0 {
		n := copy(p, s.head)
		s.head = s.head[n:]
		return n, nil
	}
	if s.err != nil {
		return 0, s.err
	}
	return s.ReadCloser.Read(p)
}
