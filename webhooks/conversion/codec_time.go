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

func marshalTime(enc *jsontext.Encoder, t metav1.Time) error {
	if t.IsZero() {
		return enc.WriteToken(jsontext.Null)
	}
	return enc.WriteToken(jsontext.String(t.UTC().Format(time.RFC3339)))
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
