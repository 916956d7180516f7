package conversion

import (
	"context"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// reviewKey holds a review's logger and UID in its context, together: one
// context value a review instead of two (log.IntoContext and the UID), as
// each costs allocations on every review. The UID is attached to the logger
// only when a line is written (WithValues up front would cost every review
// about a microsecond and a dozen allocations with the manager's zap
// logger, a few percent of converting one object, for lines that are
// almost never written).
type reviewKey struct{}

type reviewContext struct {
	uid types.UID
	log logr.Logger
}

func withReview(ctx context.Context, logger logr.Logger, uid types.UID) context.Context {
	return context.WithValue(ctx, reviewKey{}, &reviewContext{uid: uid, log: logger})
}

// reviewLog is the logger for what converting a review logs: the handler's,
// with the review's UID; outside a review (controller-runtime's handler
// calls the converters too), the context's.
func reviewLog(ctx context.Context) logr.Logger {
	if r, ok := ctx.Value(reviewKey{}).(*reviewContext); ok {
		return r.log.WithValues("review", r.uid)
	}
	return log.FromContext(ctx)
}
