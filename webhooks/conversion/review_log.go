package conversion

import (
	"context"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// reviewUIDKey holds a review's UID in its context, for the log lines that
// name the review. Attaching it to the logger up front (WithValues) would
// cost every review about a microsecond and a dozen allocations with the
// manager's zap logger, a few percent of converting one object, for lines
// that are almost never written.
type reviewUIDKey struct{}

func withReviewUID(ctx context.Context, uid types.UID) context.Context {
	return context.WithValue(ctx, reviewUIDKey{}, uid)
}

// reviewLog is the context's logger with the review's UID, if any.
func reviewLog(ctx context.Context) logr.Logger {
	logger := log.FromContext(ctx)
	if uid, ok := ctx.Value(reviewUIDKey{}).(types.UID); ok {
		logger = logger.WithValues("review", uid)
	}
	return logger
}
