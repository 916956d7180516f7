package timerepair

import "testing"

func TestCanonical(t *testing.T) {
	cases := map[string]struct {
		value, want string
		repair      bool
	}{
		"RFC 3339 needs nothing":        {value: "2024-05-01T10:00:00Z"},
		"RFC 3339 with a zone":          {value: "2024-05-01T12:00:00+02:00"},
		"lower-case t and z":            {value: "2024-05-01t10:00:00z", want: "2024-05-01T10:00:00Z", repair: true},
		"lower-case, fractional, zoned": {value: "2024-05-01t12:00:00.5+02:00", want: "2024-05-01T10:00:00Z", repair: true},
		"space for T":                   {value: "2024-05-01 10:00:00Z", want: "2024-05-01T10:00:00Z", repair: true},
		"zone without a colon":          {value: "2024-05-01T12:00:00+0200", want: "2024-05-01T10:00:00Z", repair: true},
		"no zone is UTC":                {value: "2024-05-01T10:00:00", want: "2024-05-01T10:00:00Z", repair: true},
		"not a time at all":             {value: "yesterday"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, repair := canonical(tc.value)
			if got != tc.want || repair != tc.repair {
				t.Errorf("canonical(%q) = %q, %v; want %q, %v", tc.value, got, repair, tc.want, tc.repair)
			}
		})
	}
}
