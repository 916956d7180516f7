package controllers

import "time"

// testTime is the clock of the tests that set one.
var testTime = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
