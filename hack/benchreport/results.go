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
// prints the "cpu", and hack/bench.sh the "command" that made the results
// that follow and the "loadavg" it started under. Each distinct value is
// kept once, in order.
type config struct {
	cpus     []string
	commands []command
}

// command is one go test command of hack/bench.sh and the load average it
// started under, as bench.sh writes it: "0.52 0.40 0.33 before SUITE".
type command struct{ line, loadavg string }

// readResults reads `go test -bench` output files. A benchmark reported more
// than once (-count) keeps its median value per unit.
func readResults(paths []string) ([]result, config, error) {
	var cfg config
	type sample struct {
		r      result
		values map[string][]float64
	}
	byName := map[string]*sample{}
	var order []string
	for _, path := range paths {
		f, err := os.Open(path)
		if err != nil {
			return nil, config{}, err
		}
		rd := benchfmt.NewReader(f, path)
		for rd.Scan() {
			rec, ok := rd.Result().(*benchfmt.Result)
			if !ok {
				continue // a syntax error (a log line) or unit metadata
			}
			cfg.add(rec.Config)
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
			return nil, config{}, fmt.Errorf("reading %s: %w", path, err)
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

func (cfg *config) add(cs []benchfmt.Config) {
	var cmd command
	for _, c := range cs {
		switch c.Key {
		case "cpu":
			if !slices.Contains(cfg.cpus, string(c.Value)) {
				cfg.cpus = append(cfg.cpus, string(c.Value))
			}
		case "command":
			cmd.line = string(c.Value)
		case "loadavg":
			cmd.loadavg = string(c.Value)
		}
	}
	if cmd.line != "" && !slices.ContainsFunc(cfg.commands, func(c command) bool { return c.line == cmd.line }) {
		cfg.commands = append(cfg.commands, cmd)
	}
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
