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
		// Zone offsets Go refuses, which the date-time format admits.
		"offset hour past 24":        {value: "2024-05-01T10:00:00+25:00", want: "2024-04-30T09:00:00Z", repair: true},
		"offset minute past 60":      {value: "2024-05-01T10:00:00+23:99", want: "2024-04-30T09:21:00Z", repair: true},
		"negative offset, both past": {value: "2024-05-01T10:00:00.5-99:99", want: "2024-05-05T14:39:00Z", repair: true},
		"offset past 24, lower-case": {value: "2024-05-01t10:00:00+2500", want: "2024-04-30T09:00:00Z", repair: true},
		// What Go reads but the CRDs refuse today.
		"offset of 24 hours":          {value: "2024-05-01T10:00:00+24:00", want: "2024-04-30T10:00:00Z", repair: true},
		"offset minute of 60":         {value: "2024-05-01T10:00:00-23:60", want: "2024-05-02T10:00:00Z", repair: true},
		"a comma before the fraction": {value: "2024-05-01T10:00:00,5Z", want: "2024-05-01T10:00:00Z", repair: true},
		"a one-digit hour":            {value: "2024-05-01T1:00:00Z", want: "2024-05-01T01:00:00Z", repair: true},
		"a day past its month's end":  {value: "2024-02-30T10:00:00+25:00"},
		"Feb 30 as the pattern reads": {value: "2024-02-30T10:00:00Z"},
		"hour 24":                     {value: "2024-05-01T24:00:00+25:00"},
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
