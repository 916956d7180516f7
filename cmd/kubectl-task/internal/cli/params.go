package cli

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/cmd/kubectl-task/internal/paramtext"
	"github.com/minitask-dev/minitask/cmd/kubectl-task/internal/runinfo"
	"github.com/minitask-dev/minitask/internal/runstate"
)

// parseParams reads the values of -p flags, each NAME=VALUE, in order, as
// text: typeParams reads each as the type its Task declares.
func parseParams(cmd *cobra.Command, flags []string) ([]v1.Param, error) {
	params := make([]v1.Param, 0, len(flags))
	seen := map[string]bool{}
	for _, f := range flags {
		name, value, ok := strings.Cut(f, "=")
		if !ok || name == "" {
			return nil, usageErrorf(cmd, "malformed -p %q: it needs name=value, e.g. -p greeting=hello", f)
		}
		if seen[name] {
			return nil, usageErrorf(cmd, "-p %s is given twice; give each param once", name)
		}
		seen[name] = true
		params = append(params, v1.Param{Name: name, Value: *v1.NewStringValue(value)})
	}
	return params, nil
}

// typeParams reads the text that parseParams kept of each -p value as the
// type that task declares for its param (see paramtext.Parse): a string
// as it is, an array or an object as JSON or between commas. A value that
// is not of the param's type is a usage error naming the param, its type
// and how to write it. Values for params task does not declare are left
// as they are, for checkParams to refuse.
func typeParams(cmd *cobra.Command, task *v1.Task, given []v1.Param) ([]v1.Param, error) {
	specs := make(map[string]v1.ParamSpec, len(task.Spec.Params))
	for _, p := range task.Spec.Params {
		specs[p.Name] = p
	}
	typed := make([]v1.Param, 0, len(given))
	for _, p := range given {
		spec, declared := specs[p.Name]
		if !declared {
			typed = append(typed, p)
			continue
		}
		value, err := paramtext.Parse(spec, p.Value.StringVal)
		if err != nil {
			return nil, usageErrorf(cmd, "-p %s: param %q of Task %q is %s, and %s; give %s", p.Name, p.Name, task.Name,
				paramtext.TypeName(spec), err, paramtext.Syntax(spec))
		}
		typed = append(typed, v1.Param{Name: p.Name, Value: value})
	}
	return typed, nil
}

// checkParams refuses values for params the Task does not declare, and
// required params that have no value, listing them and, so that a user sees
// every param at once, the params that have defaults.
func checkParams(cmd *cobra.Command, task *v1.Task, params []runinfo.Param) error {
	var undeclared, missingOnes, defaulted []runinfo.Param
	for _, p := range params {
		switch p.Source {
		case runinfo.Ignored:
			undeclared = append(undeclared, p)
		case runstate.Missing:
			missingOnes = append(missingOnes, p)
		}
		if p.Default != nil {
			defaulted = append(defaulted, p)
		}
	}
	if len(undeclared) > 0 {
		return usageErrorf(cmd, "Task %q has no param %q; %s", task.Name, undeclared[0].Name, declaredParams(task))
	}
	if len(missingOnes) == 0 {
		return nil
	}
	noun := "param"
	if len(missingOnes) > 1 {
		noun = "params"
	}
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 4, 3, ' ', 0)
	for _, p := range missingOnes {
		fmt.Fprintf(w, "  %s\t%s\n", p.Name, describeParam(p))
	}
	_ = w.Flush()
	if len(defaulted) > 0 {
		b.WriteString("These have defaults, and may be left out:\n")
		w = tabwriter.NewWriter(&b, 0, 4, 3, ' ', 0)
		for _, p := range defaulted {
			fmt.Fprintf(w, "  %s=%s\t%s\n", p.Name, shortValue(paramtext.Text(*p.Default), wholeInTask), describeParam(p))
		}
		_ = w.Flush()
	}
	return &usageError{
		msg:    fmt.Sprintf("Task %q needs a value for %d %s; give each with -p NAME=VALUE (nothing was created):", task.Name, len(missingOnes), noun),
		detail: b.String(),
	}
}

// describeParam is a param's description on one line, as a list of params
// shows it; a Task's description may run over lines.
func describeParam(p runinfo.Param) string {
	if p.Description == "" {
		return "(no description)"
	}
	return oneLine(p.Description)
}

// declaredParams says which params a Task takes, for messages.
func declaredParams(task *v1.Task) string {
	if len(task.Spec.Params) == 0 {
		return "it takes no params"
	}
	names := make([]string, len(task.Spec.Params))
	for i, p := range task.Spec.Params {
		names[i] = p.Name
	}
	return "its params are: " + strings.Join(names, ", ")
}
