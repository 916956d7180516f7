// Package conversion converts minitask objects between v1 (the hub, since
// release 5) and each spoke, v1alpha1 and v1beta1, directly, for the CRD
// conversion webhook, and serves it (NewHandler). What a spoke cannot
// express travels in one annotation, so round trips lose nothing;
// conversion never fails for what the API server stored, and never returns
// annotations it would refuse.
// docs/conversion.md describes the rules.
package conversion

import (
	crconversion "sigs.k8s.io/controller-runtime/pkg/webhook/conversion"

	v1 "github.com/minitask-dev/minitask/apis/v1"
	"github.com/minitask-dev/minitask/apis/v1alpha1"
	"github.com/minitask-dev/minitask/apis/v1beta1"
)

// NewTaskConverter builds the Task converter (v1 hub; v1alpha1 and v1beta1
// spokes, each converted to and from v1 directly) for a webhook builder's
// WithConverter. A conversion between the spokes goes through v1.
var NewTaskConverter = crconversion.NewHubSpokeConverter(&v1.Task{},
	crconversion.NewSpokeConverter(&v1alpha1.Task{}, ConvertTaskFromHub, ConvertTaskToHub),
	crconversion.NewSpokeConverter(&v1beta1.Task{}, ConvertBetaTaskFromHub, ConvertBetaTaskToHub))

// NewTaskRunConverter builds the TaskRun converter (v1 hub; v1alpha1 and
// v1beta1 spokes) for a webhook builder's WithConverter.
var NewTaskRunConverter = crconversion.NewHubSpokeConverter(&v1.TaskRun{},
	crconversion.NewSpokeConverter(&v1alpha1.TaskRun{}, ConvertTaskRunFromHub, ConvertTaskRunToHub),
	crconversion.NewSpokeConverter(&v1beta1.TaskRun{}, ConvertBetaTaskRunFromHub, ConvertBetaTaskRunToHub))
