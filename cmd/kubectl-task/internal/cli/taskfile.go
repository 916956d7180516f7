package cli

import (
	"context"
	"fmt"
	"io"
	"os"

	"sigs.k8s.io/yaml"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/apis/v1alpha1"
	"github.com/minitask-dev/minitask/apis/v1beta1"
	"github.com/minitask-dev/minitask/webhooks/conversion"
)

// readTaskFile reads the Task in the file at path (- for stdin), in any
// version the API serves, as v1: converted as the API server's conversion
// would, so that start -f runs what applying the file then starting the
// Task would.
func readTaskFile(ctx context.Context, path string, stdin io.Reader) (*v1.Task, error) {
	var data []byte
	var err error
	if path == "-" {
		data, err = io.ReadAll(stdin)
	} else {
		data, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, fmt.Errorf("reading the Task file: %w", err)
	}
	var head struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := yaml.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	if head.Kind != "Task" {
		return nil, fmt.Errorf("%s holds kind %q, not a Task: start -f runs one Task of minitask.dev/v1, v1beta1 or v1alpha1", path, head.Kind)
	}
	task := &v1.Task{}
	switch head.APIVersion {
	case v1.GroupVersion.String():
		err = yaml.UnmarshalStrict(data, task)
	case v1beta1.GroupVersion.String():
		spoke := &v1beta1.Task{}
		if err = yaml.UnmarshalStrict(data, spoke); err == nil {
			err = conversion.ConvertBetaTaskToHub(ctx, spoke, task)
		}
	case v1alpha1.GroupVersion.String():
		spoke := &v1alpha1.Task{}
		if err = yaml.UnmarshalStrict(data, spoke); err == nil {
			err = conversion.ConvertTaskToHub(ctx, spoke, task)
		}
	default:
		return nil, fmt.Errorf("%s holds a Task of apiVersion %q: start -f reads minitask.dev/v1, v1beta1 and v1alpha1", path, head.APIVersion)
	}
	if err != nil {
		return nil, fmt.Errorf("reading the Task in %s: %w", path, err)
	}
	if task.Name == "" {
		return nil, fmt.Errorf("the Task in %s has no metadata.name, which names its runs", path)
	}
	return task, nil
}
