// Package conversion converts minitask objects between v1alpha1 (the spoke)
// and v1beta1 (the hub) for the CRD conversion webhook, and serves it
// (NewHandler). Fields v1beta1 adds travel through v1alpha1 in one
// annotation, so round trips lose nothing; conversion never fails for what
// the API server stored, and never returns annotations it would refuse.
// docs/conversion.md describes the rules.
package conversion

import (
	crconversion "sigs.k8s.io/controller-runtime/pkg/webhook/conversion"

	"github.com/minitask-dev/minitask/apis/v1alpha1"
	"github.com/minitask-dev/minitask/apis/v1beta1"
)

// NewTaskConverter builds the Task converter (v1beta1 hub, v1alpha1 spoke)
// for a webhook builder's WithConverter.
var NewTaskConverter = crconversion.NewHubSpokeConverter(&v1beta1.Task{},
	crconversion.NewSpokeConverter(&v1alpha1.Task{}, ConvertTaskFromHub, ConvertTaskToHub))

// NewTaskRunConverter builds the TaskRun converter (v1beta1 hub, v1alpha1
// spoke) for a webhook builder's WithConverter.
var NewTaskRunConverter = crconversion.NewHubSpokeConverter(&v1beta1.TaskRun{},
	crconversion.NewSpokeConverter(&v1alpha1.TaskRun{}, ConvertTaskRunFromHub, ConvertTaskRunToHub))
