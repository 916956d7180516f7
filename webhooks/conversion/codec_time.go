package conversion

import (
	"fmt"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// timeCodec reads and writes metav1.Time as its own JSON methods do (null
// for the zero time, else RFC 3339 in UTC; read in the local zone), without
// them: UnmarshalJSON hands each time to encoding/json to unquote it, and
// a finished TaskRun holds a dozen times, twice over counting its stash.
// That was a sixth of converting one. TestTimeCodecMatchesMetav1 holds it
// to the methods.

var timeCodec = jsonv2.JoinOptions(
	jsonv2.WithMarshalers(jsonv2.MarshalToFunc(marshalTime)),
	jsonv2.WithUnmarshalers(jsonv2.UnmarshalFromFunc(unmarshalTime)),
)

// quotedTimeLen is the length of a quoted RFC 3339 time in UTC with a
// four-digit year, the buffer marshalTime formats into.
const quotedTimeLen = len(`"2006-01-02T15:04:05Z"`)

func marshalTime(enc *jsontext.Encoder, t metav1.Time) error {
	if t.IsZero() {
		return enc.WriteToken(jsontext.Null)
	}
	// Formatted in place, quoted, and written as a value: no string to
	// allocate and escape for each of a run's dozen times, since RFC 3339
	// holds nothing JSON escapes.
	var buf [quotedTimeLen]byte
	quoted := append(t.UTC().AppendFormat(append(buf[:0], '"'), time.RFC3339), '"')
	return enc.WriteValue(quoted)
}

func unmarshalTime(dec *jsontext.Decoder, t *metav1.Time) error {
	token, err := dec.ReadToken()
	if err != nil {
		return err
	}
	switch token.Kind() {
	case 'n':
		t.Time = time.Time{}
		return nil
	case '"':
		parsed, err := time.Parse(time.RFC3339, token.String())
		if err != nil {
			return err
		}
		t.Time = parsed.Local()
		return nil
	default:
		return fmt.Errorf("a time is a JSON string or null, not %s", token.Kind())
	}
}
