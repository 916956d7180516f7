package params

import (
	"fmt"
	"strings"
	"testing"
)

// benchScript is a ~10 KB script with a reference on every other line, the
// size of the largest scripts we expect in a Task.
var benchScript = func() string {
	var b strings.Builder
	for i := 0; b.Len() < 10*1024; i++ {
		fmt.Fprintf(&b, "echo \"step %d: $(params.greeting), $(params.name_%d)\" | tee -a \"$HOME/log\"\n", i, i%5)
		fmt.Fprintf(&b, "test -n \"$(date)\" && sleep 0 # line %d without a param\n", i)
	}
	return b.String()
}()

func BenchmarkSubstitute(b *testing.B) {
	values := map[string]string{"greeting": "hello, world"}
	for i := range 5 {
		values[fmt.Sprintf("name_%d", i)] = fmt.Sprintf("value-%d", i)
	}
	b.SetBytes(int64(len(benchScript)))
	b.ReportAllocs()
	for b.Loop() {
		_ = Substitute(benchScript, Values{Params: values})
	}
}
