package conversion

import (
	"k8s.io/utils/ptr"

	"github.com/minitask-dev/minitask/apis/v1beta1"
)

// The generators of the fields issue 15 added to v1beta1 (results, onError,
// retries, TTL, attempts). Like the others, each fills every field of its
// type now and then and leaves it out as often, with the values the CRD
// admits: 0 beside absent for the counts, an empty result value beside a
// text, and onError: continue only on script steps.

// results is a Task's result declarations: nil, empty, or up to 4.
func (g *objectGenerator) results() []v1beta1.ResultDeclaration {
	return list(g, 4, func(name string) v1beta1.ResultDeclaration {
		return v1beta1.ResultDeclaration{Name: name, Description: g.text()}
	}, g.paramName)
}

// onError is absent or stopAndFail, and on a script step also continue.
func (g *objectGenerator) onError(step *v1beta1.Step) v1beta1.OnError {
	if step.Script != "" {
		return pick(g, "", v1beta1.OnErrorStopAndFail, v1beta1.OnErrorContinue, v1beta1.OnErrorContinue)
	}
	return pick(g, "", v1beta1.OnErrorStopAndFail)
}

// endWithScript makes the last of steps a script step, as a Task that
// declares results must have: its command and args go, which a script
// cannot have beside it.
func endWithScript(steps []v1beta1.Step) {
	if len(steps) == 0 {
		return
	}
	last := &steps[len(steps)-1]
	if last.Script == "" {
		last.Script = "echo done"
	}
	last.Command, last.Args = nil, nil
}

// retries is absent, 0 (which must survive apart from absent) or 1 to 10.
func (g *objectGenerator) retries() *int32 {
	return pick(g, nil, ptr.To[int32](0), ptr.To(1+g.r.Int32N(10)))
}

// retryOn is absent or a set of one or both reasons, in either order; the
// CRD admits no empty list.
func (g *objectGenerator) retryOn() []v1beta1.RetryReason {
	return pick(g, nil,
		[]v1beta1.RetryReason{v1beta1.RetryOnPodFailed},
		[]v1beta1.RetryReason{v1beta1.RetryOnStepFailed},
		[]v1beta1.RetryReason{v1beta1.RetryOnPodFailed, v1beta1.RetryOnStepFailed},
		[]v1beta1.RetryReason{v1beta1.RetryOnStepFailed, v1beta1.RetryOnPodFailed})
}

// ttl is absent, 0 (which must survive apart from absent) or any seconds.
func (g *objectGenerator) ttl() *int32 {
	return pick(g, nil, ptr.To[int32](0), ptr.To(g.r.Int32()))
}

// runResults are a run's results; every value is set (the CRD requires
// one), often to the empty string, which must survive as such.
func (g *objectGenerator) runResults() []v1beta1.RunResult {
	return list(g, 4, func(name string) v1beta1.RunResult {
		return v1beta1.RunResult{Name: name, Value: ptr.To(g.text())}
	}, g.paramName)
}

// attempts are a run's earlier attempts, with or without times and
// messages.
func (g *objectGenerator) attempts() []v1beta1.Attempt {
	return list(g, 4, func(podName string) v1beta1.Attempt {
		return v1beta1.Attempt{
			PodName:        podName,
			StartTime:      g.optionalTime(),
			CompletionTime: g.optionalTime(),
			Reason:         pick(g, string(v1beta1.RetryOnPodFailed), string(v1beta1.RetryOnStepFailed), g.reason()),
			Message:        g.text(),
		}
	}, g.dnsLabel)
}
