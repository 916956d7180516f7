package v1

// TimePattern is the pattern of every time field of our own types, in both
// versions: RFC 3339 with an upper-case T and Z, each number in its range
// (month 01-12, day 01-31, hour 00-23, minute and second 00-59, zone offset
// -23:59 to +23:59), so that metav1.Time (Go's time.Parse with
// time.RFC3339) reads whatever the API server stores. A marker cannot name a
// constant, so each field repeats it and apis' tests hold every generated
// pattern, and docs/conversion.md, to this one.
//
// What it does not say is left to the date-time format those fields also
// carry, which reads the date as Go does: a day past its month's end (Feb
// 30, Apr 31, Feb 29 of a common year). It refuses, as RFC 3339 does, two
// zone offsets Go still reads today (+24:00, and a minute of 60), and a
// comma before the fraction of a second.
const TimePattern = `^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]+)?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$`
