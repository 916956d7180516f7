package conversion

import (
	"fmt"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// timeReading reads metav1.Time as its UnmarshalJSON does (null for the
// zero time, else RFC 3339, in the local zone), without it: UnmarshalJSON
// hands each time to encoding/json to unquote it, and a finished TaskRun
// holds a dozen times, twice over counting its stash. That was a sixth of
// converting one. TestTimeCodecMatchesMetav1 holds it to the method.
//
// Times are written by metav1.Time's own MarshalJSON, which formats in
// place and is cheap: a marshaler here would cost more than it saves, as
// the codec then looks up every value's type among its marshalers.
var timeReading = jsonv2.WithUnmarshalers(jsonv2.UnmarshalFromFunc(unmarshalTime))

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
