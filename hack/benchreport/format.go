package main

import (
	"fmt"
	"math"
)

// Each format prints a value as the benchmark reported it, in the unit
// people read: three significant digits are all a single run supports.

func millis(ns float64) string { return ms(ns / 1e6) }

func ms(v float64) string { return sig(v) + " ms" }

func seconds(v float64) string { return sig(v) + " s" }

func mb(v float64) string { return sig(v) + " MB" }

func megabytes(b float64) string { return mb(b / 1e6) }

func times(v float64) string { return sig(v) + "x" }

func count(v float64) string { return fmt.Sprintf("%.0f", v) }

func decimal(v float64) string { return sig(v) }

func perSecond(unit string) func(float64) string {
	return func(v float64) string { return sig(v) + " " + unit + "/s" }
}

// sig prints v with three significant digits, without an exponent.
func sig(v float64) string {
	if v == 0 || math.Abs(v) >= 100 {
		return fmt.Sprintf("%.0f", v)
	}
	decimals := 2 - int(math.Floor(math.Log10(math.Abs(v))))
	return fmt.Sprintf("%.*f", decimals, v)
}
