package v1

// StepReasonContinued is a step's status.steps[].reason when it exited
// non-zero and its onError: continue let the run go on.
const StepReasonContinued = "Continued"

// StepReasonTimedOut is a step's status.steps[].reason when it ran past
// its timeout and was stopped: its run failed StepTimedOut, or went on
// under onError: continue. Its exitCode is its script's own, where it has
// one.
const StepReasonTimedOut = "TimedOut"

// StepReasonNoShell is a step's status.steps[].reason when it is a script
// step whose image has no /bin/sh to run its script: the container could not
// start, and the run failed.
const StepReasonNoShell = "NoShell"

// ConditionSucceeded is the one condition type a TaskRun reports: Unknown while
// it runs, True when every step exited 0, False when it failed.
const ConditionSucceeded = "Succeeded"

// TaskRunReason is the reason of a TaskRun's Succeeded condition.
type TaskRunReason string

// The reasons of the Succeeded condition (see docs/lifecycle.md).
const (
	// ReasonPending: started; the Pod is not yet running a step.
	ReasonPending TaskRunReason = "Pending"
	// ReasonWaitingForTask: the referenced Task does not exist (yet).
	ReasonWaitingForTask TaskRunReason = "WaitingForTask"
	// ReasonRunning: a step is running.
	ReasonRunning TaskRunReason = "Running"
	// ReasonSucceeded: every step exited 0.
	ReasonSucceeded TaskRunReason = "Succeeded"
	// ReasonStepFailed: a step exited non-zero, or could not start for good
	// (its executable, or its script's shell, is missing from its image).
	ReasonStepFailed TaskRunReason = "StepFailed"
	// ReasonStepTimedOut: a step ran past its own timeout and was stopped;
	// the message names the step and the timeout.
	ReasonStepTimedOut TaskRunReason = "StepTimedOut"
	// ReasonTimeout: the run did not finish within its timeout.
	ReasonTimeout TaskRunReason = "TaskRunTimeout"
	// ReasonCancelled: spec.status asked for cancellation.
	ReasonCancelled TaskRunReason = "TaskRunCancelled"
	// ReasonInvalidParams: params with no default were given no value.
	ReasonInvalidParams TaskRunReason = "InvalidParams"
	// ReasonPodFailed: the Pod failed for a reason other than a step.
	ReasonPodFailed TaskRunReason = "PodFailed"
	// ReasonRetrying: an attempt failed for a reason in retryOn; the next
	// attempt's Pod is on its way.
	ReasonRetrying TaskRunReason = "Retrying"
	// ReasonResultsTooLarge: a step's results do not fit its termination
	// message (4 KiB).
	ReasonResultsTooLarge TaskRunReason = "ResultsTooLarge"
	// ReasonImagePullFailed: a step's image could not be pulled for longer
	// than the manager's --image-pull-timeout.
	ReasonImagePullFailed TaskRunReason = "ImagePullFailed"
	// ReasonPodConfigFailed: the Pod could not start a step, or mount a
	// volume, because of its configuration (a missing ConfigMap or Secret,
	// a container the runtime cannot create) for longer than the manager's
	// --pod-config-timeout.
	ReasonPodConfigFailed TaskRunReason = "PodConfigFailed"
	// ReasonPendingTimeout: the run's first step did not start within its
	// timeouts.pending; the message names what held it.
	ReasonPendingTimeout TaskRunReason = "PendingTimeout"
	// ReasonSidecarFailed: a sidecar could not start or become ready
	// before timeouts.pending ended (or its image could not be pulled for
	// longer than the manager's --image-pull-timeout); the message names
	// the sidecar and why.
	ReasonSidecarFailed TaskRunReason = "SidecarFailed"
	// ReasonFailed: only from conversion, when a v1alpha1 writer set phase Failed.
	ReasonFailed TaskRunReason = "Failed"
)
