package conversion

import (
	"context"
	"time"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/apis/v1alpha1"
	"github.com/minitask-dev/minitask/apis/v1beta1"
)

// The generators of v1 objects start from the random v1beta1 ones, every
// field releases 2 to 4 added among them, and add what only v1 expresses:
// typed params (an array or an object, with its properties, as a default or
// a run's value, or a string said to be one), timeouts.pending, and
// release 7's fields (random_release7_test.go).

func (g *objectGenerator) v1Task() *v1.Task {
	task := &v1.Task{}
	if err := ConvertBetaTaskToHub(context.Background(), g.hubTask(), task); err != nil {
		panic(err)
	}
	for i := range task.Spec.Params {
		p := &task.Spec.Params[i]
		switch g.intn(4) {
		case 0:
			p.Type = v1.ParamTypeArray
			p.Default = nil
			if g.chance(0.7) {
				p.Default = g.arrayValue()
			}
		case 1:
			value := g.objectValue()
			p.Type = v1.ParamTypeObject
			p.Properties = map[string]v1.PropertySpec{}
			for k := range value.ObjectVal {
				p.Properties[k] = v1.PropertySpec{Type: pick(g, "", v1.PropertyTypeString)}
			}
			p.Default = nil
			if g.chance(0.7) {
				p.Default = value
			}
		case 2:
			p.Type = v1.ParamTypeString // said, not defaulted
		}
	}
	g.release7TaskSpec(&task.Spec)
	return task
}

func (g *objectGenerator) v1TaskRun() *v1.TaskRun {
	run := &v1.TaskRun{}
	if err := ConvertBetaTaskRunToHub(context.Background(), g.hubTaskRun(), run); err != nil {
		panic(err)
	}
	for i := range run.Spec.Params {
		switch g.intn(3) {
		case 0:
			run.Spec.Params[i].Value = *g.arrayValue()
		case 1:
			run.Spec.Params[i].Value = *g.objectValue()
		}
	}
	if run.Spec.TaskRef.Name != "" && g.chance(0.4) {
		pending := v1.NewDuration(time.Duration(g.intn(3600)) * time.Second)
		run.Spec.Timeouts.Pending = pending
	}
	g.release7TaskRun(run)
	return run
}

// arrayValue is an array of a few texts, empty too.
func (g *objectGenerator) arrayValue() *v1.ParamValue {
	items := make([]string, g.intn(4))
	for i := range items {
		items[i] = g.text()
	}
	return v1.NewArrayValue(items...)
}

// objectValue is an object of a few keys (param names) and texts.
func (g *objectGenerator) objectValue() *v1.ParamValue {
	keys := map[string]string{}
	for range 1 + g.intn(3) {
		keys[g.paramName()] = g.text()
	}
	return v1.NewObjectValue(keys)
}

// The spokes' objects as v1's conversion writes them: whatever v1 holds,
// the stash included, for the spoke -> hub -> spoke round trips.

func (g *objectGenerator) alphaTaskOfV1() *v1alpha1.Task {
	spoke := &v1alpha1.Task{}
	if err := ConvertTaskFromHub(context.Background(), g.v1Task(), spoke); err != nil {
		panic(err)
	}
	return spoke
}

func (g *objectGenerator) betaTaskOfV1() *v1beta1.Task {
	spoke := &v1beta1.Task{}
	if err := ConvertBetaTaskFromHub(context.Background(), g.v1Task(), spoke); err != nil {
		panic(err)
	}
	return spoke
}

func (g *objectGenerator) alphaTaskRunOfV1() *v1alpha1.TaskRun {
	spoke := &v1alpha1.TaskRun{}
	if err := ConvertTaskRunFromHub(context.Background(), g.v1TaskRun(), spoke); err != nil {
		panic(err)
	}
	return spoke
}

func (g *objectGenerator) betaTaskRunOfV1() *v1beta1.TaskRun {
	spoke := &v1beta1.TaskRun{}
	if err := ConvertBetaTaskRunFromHub(context.Background(), g.v1TaskRun(), spoke); err != nil {
		panic(err)
	}
	return spoke
}
