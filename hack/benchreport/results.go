package main

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"golang.org/x/perf/benchfmt"
)

// result is one benchmark line: its name split into the base name, the
// key=value levels and the other levels (a mode such as "floor"), and its
// values by unit, as the benchmark printed them.
type result struct {
	base   string
	keys   map[string]string
	modes  []string
	values map[string]float64
}

// config is what the input files say before their results: `go test`
// prints e.g. "cpu" and "goos", and hack/bench.sh the "command" that made the
// file. It keeps each distinct value of a key once, in order.
type config map[string][]string

// readResults reads `go test -bench` output files. A benchmark reported more
// than once (-count) keeps its median value per unit.
func readResults(paths []string) ([]result, config, error) {
	cfg := config{}
	type sample struct {
		r      result
		values map[string][]float64
	}
	byName := map[string]*sample{}
	var order []string
	for _, path := range paths {
		f, err := os.Open(path)
		if err != nil {
			return nil, nil, err
		}
		rd := benchfmt.NewReader(f, path)
		for rd.Scan() {
			rec, ok := rd.Result().(*benchfmt.Result)
			if !ok {
				continue // a syntax error (a log line) or unit metadata
			}
			for _, c := range rec.Config {
				if c.File && !slices.Contains(cfg[c.Key], string(c.Value)) {
					cfg[c.Key] = append(cfg[c.Key], string(c.Value))
				}
			}
			name := rec.Name.String()
			s := byName[name]
			if s == nil {
				s = &sample{r: parseName(rec.Name), values: map[string][]float64{}}
				byName[name] = s
				order = append(order, name)
			}
			for _, v := range rec.Values {
				unit, value := v.Unit, v.Value
				if v.OrigUnit != "" {
					unit, value = v.OrigUnit, v.OrigValue
				}
				s.values[unit] = append(s.values[unit], value)
			}
		}
		err = rd.Err()
		f.Close()
		if err != nil {
			return nil, nil, fmt.Errorf("reading %s: %w", path, err)
		}
	}
	results := make([]result, 0, len(order))
	for _, name := range order {
		s := byName[name]
		s.r.values = map[string]float64{}
		for unit, vs := range s.values {
			s.r.values[unit] = median(vs)
		}
		results = append(results, s.r)
	}
	return results, cfg, nil
}

func parseName(n benchfmt.Name) result {
	base, parts := n.Parts()
	r := result{base: strings.TrimPrefix(string(base), "Benchmark"), keys: map[string]string{}}
	for _, p := range parts {
		level := string(p)
		if !strings.HasPrefix(level, "/") {
			continue // the -GOMAXPROCS suffix
		}
		level = level[1:]
		if k, v, ok := strings.Cut(level, "="); ok {
			r.keys[k] = v
		} else {
			r.modes = append(r.modes, level)
		}
	}
	return r
}

func median(vs []float64) float64 {
	vs = slices.Clone(vs)
	slices.Sort(vs)
	if len(vs)%2 == 1 {
		return vs[len(vs)/2]
	}
	return (vs[len(vs)/2-1] + vs[len(vs)/2]) / 2
}

// matches reports whether r is a result of benchmark base whose keys include
// every key=value of want.
func (r result) matches(base string, want map[string]string) bool {
	if r.base != base {
		return false
	}
	for k, v := range want {
		if r.keys[k] != v {
			return false
		}
	}
	return true
}

func (r result) hasMode(mode string) bool { return slices.Contains(r.modes, mode) }
