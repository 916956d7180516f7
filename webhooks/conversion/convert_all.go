package conversion

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/go-json-experiment/json/jsontext"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	conversionmetrics "sigs.k8s.io/controller-runtime/pkg/webhook/conversion/metrics"
)

// objectsPerWorker is how many objects a review must hold per goroutine
// that converts them: below it, one goroutine converts them all, since
// starting more would cost more than it saves on a small review.
const objectsPerWorker = 64

// panicMessage is the Failure a review gets when a converter panics: the
// same as controller-runtime's handler, which tells nothing of the panic.
const panicMessage = "internal error occurred during conversion"

// convertAll converts every object of a review as planned, each to its own
// JSON, on as many goroutines as there are processors (GOMAXPROCS) when the
// review is large: a LIST of 10,000 objects is what an API server restart or
// a cold cache sends, and the API server waits for all of it. Objects are
// independent, so the answer is the same whatever the order they are
// converted in. It fails the review on the first object, by index, that
// can be neither converted nor passed through, and on any panic, which it
// recovers on the goroutine that panicked.
func convertAll(ctx context.Context, h *handler, raws []jsontext.Value, plans []conversionPlan) ([]jsontext.Value, error) {
	b := batch{ctx: ctx, h: h, raws: raws, plans: plans,
		objects: make([]jsontext.Value, len(raws)), errs: make([]error, len(raws))}
	b.convertOn(min(runtime.GOMAXPROCS(0), 1+len(raws)/objectsPerWorker))

	if b.panicked.Load() {
		return nil, errors.New(panicMessage)
	}
	for i, err := range b.errs {
		if err != nil {
			reviewLog(ctx).Error(err, "Failing a conversion review", "object", i)
			return nil, fmt.Errorf("object %d: %w", i, err)
		}
	}
	return b.objects, nil
}

// batch is one review's objects being converted: the next to take, and
// what each became.
type batch struct {
	ctx   context.Context
	h     *handler
	raws  []jsontext.Value
	plans []conversionPlan

	objects  []jsontext.Value
	errs     []error
	next     atomic.Int64
	panicked atomic.Bool
}

// convertOn converts on workers goroutines, this one included: most
// reviews hold one object (a GET, a write, a watch event), converted here
// with no goroutine started.
func (b *batch) convertOn(workers int) {
	var wg sync.WaitGroup
	for range workers - 1 {
		wg.Go(b.convert)
	}
	b.convert()
	wg.Wait()
}

// convert converts objects until none is left or one panicked.
func (b *batch) convert() {
	defer func() {
		// Counted and logged once a review, as controller-runtime's
		// handler does, however many goroutines panic.
		if r := recover(); r != nil && b.panicked.CompareAndSwap(false, true) {
			conversionmetrics.WebhookPanics.WithLabelValues().Inc()
			for _, fn := range utilruntime.PanicHandlers {
				fn(b.ctx, r)
			}
		}
	}()
	for {
		i := int(b.next.Add(1) - 1)
		if i >= len(b.raws) || b.panicked.Load() {
			return
		}
		b.objects[i], b.errs[i] = b.h.convertObject(b.ctx, b.raws[i], b.plans[i])
	}
}
