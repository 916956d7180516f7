package conversion

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/go-json-experiment/json/jsontext"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	conversionmetrics "sigs.k8s.io/controller-runtime/pkg/webhook/conversion/metrics"
)

// streamAfterBytes is how much of a review's objects the handler holds
// before it converts them as they are read, and answers as it converts
// them. A review with less is read whole first and then converted, so
// that it is refused (HTTP 400) or failed (a Failure with no objects)
// before any of its answer is written, as it was before the handler
// streamed; most reviews hold one object (a GET, a write, a watch event).
const streamAfterBytes = 1 << 20

// objectsPerWorker is how many objects a review read whole must hold per
// goroutine that converts them: below it, one goroutine converts them all,
// since starting more would cost more than it saves on a small review.
const objectsPerWorker = 64

// jobsPerWorker is how many batches each goroutine converting a review
// may be given ahead of the one being written: enough to keep every one
// busy, few enough that the objects in flight are a handful of batches.
const jobsPerWorker = 2

// A review's objects go to the goroutines that convert them in batches of
// up to batchObjects objects or batchBytes of them, whichever comes first:
// one object at a time, the hand-offs cost a small object (a TaskRun of a
// kilobyte or two) more than its conversion, and left both cores idle half
// the time; a batch keeps the objects in flight to a few hundred KB.
const (
	batchObjects = 32
	batchBytes   = 64 << 10
)

// panicMessage is the Failure a review gets when a converter panics: the
// same as controller-runtime's handler, which tells nothing of the panic.
const panicMessage = "internal error occurred during conversion"

// errStopReading stops the decoding of a review that has failed: its other
// objects would be converted for nothing.
var errStopReading = errors.New("the conversion review has failed")

// reviewStream converts one review's objects in order and writes each to
// the answer: from the moment more than streamAfterBytes of them came and
// the review's desiredAPIVersion is known, each as it is read (streaming),
// so that a review of any size takes a few objects' worth of heap; else
// once the review is read whole. The API server writes a review's uid and
// desiredAPIVersion before its objects; a review that lists its objects
// first is held whole, up to the body's bound, until its desiredAPIVersion
// comes.
//
// A large review's objects are converted on every processor (GOMAXPROCS)
// and written in order by one more goroutine: a LIST after an API server
// restart or of a cold cache is when the API server waits longest on one
// review.
type reviewStream struct {
	h      *handler
	ctx    context.Context
	w      http.ResponseWriter
	r      *http.Request
	body   io.Reader          // r.Body within the bound
	req    *conversionRequest // the request the review is decoded into
	answer answer

	started      bool // converting, to desired
	streaming    bool // started before the review was read whole
	cannotStream bool // w cannot be written while r.Body is read
	objectsAgain bool // the objects were given again once streaming
	desired      string
	gv           schema.GroupVersion
	next         int // the next object's index

	// failure is what fails the review: set by start, by write (on the
	// writer goroutine, or this one when there is none) and by end once
	// the writer is done.
	failure error

	jobs, ordered chan *objectJob // to the workers; to the writer, in order
	batch         *objectJob      // the objects add has not handed on yet
	wg            sync.WaitGroup
	stop          atomic.Bool // the review has failed: convert and write no more
	panicked      atomic.Bool
}

// objectJob is a batch of a review's objects, in order from index first,
// handed to the goroutines that convert it.
type objectJob struct {
	first int
	raws  []jsontext.Value
	plans []*conversionPlan // nil until the object is planned
	bytes int
	outs  []jsontext.Value
	errs  []error
	done  chan struct{}
}

// take holds value, the next object of the request the review is decoded
// into, or converts it once the review streams; once the review has
// failed, it stops the reading.
func (s *reviewStream) take(value jsontext.Value) error {
	held := &s.req.Objects.held
	switch {
	case s.stop.Load():
	case s.started:
		s.add(bytes.Clone(value), nil)
	default:
		held.add(value)
		if held.bytes < s.h.streamAfter || s.req.DesiredAPIVersion == "" || !s.canStream() {
			return nil
		}
		s.streaming = true
		s.start(s.req)
	}
	if s.stop.Load() {
		return errStopReading
	}
	return nil
}

// canStream is whether the answer can be written while the body is still
// being read: always over HTTP/2; over HTTP/1 once the server is told
// (EnableFullDuplex), since it would otherwise drop what is left of the
// body before it writes the answer's first bytes. Where it cannot, every
// review is held whole.
func (s *reviewStream) canStream() bool {
	if !s.cannotStream && s.r.ProtoMajor < 2 {
		s.cannotStream = http.NewResponseController(s.w).EnableFullDuplex() != nil
	}
	return !s.cannotStream
}

// objectsGivenAgain stops a review that gives its objects again once the
// first ones are being converted: they cannot be taken back.
func (s *reviewStream) objectsGivenAgain() error {
	s.objectsAgain = true
	return errStopReading
}

// start converts the objects req holds, in order, and from then on each
// one take is given. It plans every object held before it converts any
// (a kind or version it does not know, or none, fails the review as
// controller-runtime's handler fails it): a review read whole that fails
// converts nothing.
func (s *reviewStream) start(req *conversionRequest) {
	s.started = true
	s.desired = req.DesiredAPIVersion
	s.ctx = withReview(s.ctx, s.h.log, req.UID)
	held := req.Objects.held.take()
	gv, err := schema.ParseGroupVersion(s.desired)
	if err != nil {
		s.fail(fmt.Errorf("desired version %q: %w", s.desired, err))
		return
	}
	s.gv = gv
	plans := make([]conversionPlan, len(held))
	for i, raw := range held {
		if plans[i], err = s.h.plan(raw, gv); err != nil {
			reviewLog(s.ctx).Error(err, "Failing a conversion review", "object", i)
			s.fail(fmt.Errorf("object %d: %w", i, err))
			return
		}
	}
	workers := runtime.GOMAXPROCS(0)
	if !s.streaming {
		workers = min(workers, 1+len(held)/objectsPerWorker)
	}
	if workers > 1 {
		s.startWorkers(workers)
	}
	for i := range held {
		s.add(held[i], &plans[i])
		held[i] = nil // converted, or in flight: no longer held here
		if s.stop.Load() {
			return
		}
	}
}

// add converts the next object, here or on the workers; plan is nil for
// one not planned yet.
func (s *reviewStream) add(raw jsontext.Value, plan *conversionPlan) {
	i := s.next
	s.next++
	if s.jobs == nil {
		out, err := s.convert(raw, plan)
		s.write(i, out, err)
		return
	}
	if s.batch == nil {
		s.batch = &objectJob{first: i, done: make(chan struct{})}
	}
	b := s.batch
	b.raws, b.plans, b.bytes = append(b.raws, raw), append(b.plans, plan), b.bytes+len(raw)
	if len(b.raws) >= batchObjects || b.bytes >= batchBytes {
		s.handOn()
	}
}

// handOn gives the batch add has gathered to the workers, and to the writer.
func (s *reviewStream) handOn() {
	job := s.batch
	if job == nil {
		return
	}
	s.batch = nil
	s.ordered <- job // waits while the workers are jobsPerWorker behind
	s.jobs <- job
}

// startWorkers starts workers goroutines that convert the objects add
// gives them, and one that writes them in order.
func (s *reviewStream) startWorkers(workers int) {
	s.jobs = make(chan *objectJob, workers*jobsPerWorker)
	s.ordered = make(chan *objectJob, workers*jobsPerWorker)
	for range workers {
		s.wg.Go(func() {
			for job := range s.jobs {
				job.outs, job.errs = make([]jsontext.Value, len(job.raws)), make([]error, len(job.raws))
				// An error or a failed review ends the batch: the writer
				// writes what came before the error, fails the review on
				// it, and writes nothing after.
				for k := 0; k < len(job.raws) && !s.stop.Load(); k++ {
					if job.outs[k], job.errs[k] = s.convert(job.raws[k], job.plans[k]); job.errs[k] != nil {
						break
					}
				}
				job.raws, job.plans = nil, nil
				close(job.done)
			}
		})
	}
	s.wg.Go(func() {
		for job := range s.ordered {
			<-job.done
			// A worker leaves a batch's objects unconverted only once the
			// review has failed, and write writes nothing after that.
			for k := range job.outs {
				s.write(job.first+k, job.outs[k], job.errs[k])
			}
		}
	})
}

// convert converts one object, planning it first if it is not yet. A
// panic fails the review, and is counted and logged once a review, as
// controller-runtime's handler does, however many goroutines panic.
func (s *reviewStream) convert(raw jsontext.Value, plan *conversionPlan) (out jsontext.Value, err error) {
	defer func() {
		if r := recover(); r != nil {
			s.stop.Store(true)
			if s.panicked.CompareAndSwap(false, true) {
				conversionmetrics.WebhookPanics.WithLabelValues().Inc()
				for _, fn := range utilruntime.PanicHandlers {
					fn(s.ctx, r)
				}
			}
			err = errors.New(panicMessage)
		}
	}()
	if plan == nil {
		planned, err := s.h.plan(raw, s.gv)
		if err != nil {
			return nil, err
		}
		plan = &planned
	}
	return s.h.convertObject(s.ctx, raw, *plan)
}

// write puts object i, converted, into the answer, or fails the review
// with its error. Once the review has failed, nothing more is written.
func (s *reviewStream) write(i int, out jsontext.Value, err error) {
	switch {
	case s.stop.Load():
	case err != nil:
		reviewLog(s.ctx).Error(err, "Failing a conversion review", "object", i)
		s.fail(fmt.Errorf("object %d: %w", i, err))
	default:
		s.answer.object(out)
	}
}

// fail fails the review with err, unless it failed already.
func (s *reviewStream) fail(err error) {
	if s.failure == nil {
		s.failure = err
	}
	s.stop.Store(true)
}

// end waits for the objects in flight to be written, then writes the rest
// of the answer. For a review that streamed, what the rest of its body
// held is judged first (readErr, what the decoder found after the answer
// began): the answer has begun, so it can no longer be refused with an
// HTTP status, and it fails it instead.
func (s *reviewStream) end(review *conversionReview, readErr error) {
	if s.jobs != nil {
		s.handOn()
		close(s.jobs)
		close(s.ordered)
		s.wg.Wait()
	}
	if s.streaming {
		s.judgeTheRest(review, readErr)
	}
	result := metav1.Status{Status: metav1.StatusSuccess}
	switch {
	case s.panicked.Load():
		result = metav1.Status{Status: metav1.StatusFailure, Message: panicMessage}
	case s.failure != nil:
		result = metav1.Status{Status: metav1.StatusFailure, Message: s.failure.Error()}
	}
	uid := s.req.UID
	if req := review.request(); req != nil {
		uid = req.UID
	}
	if err := s.answer.end(uid, result, review.TypeMeta); err != nil {
		s.h.log.Error(err, "Cannot write a conversion response")
	}
}

// judgeTheRest fails a streamed review on what came after its objects
// began to be converted: a body that ends in malformed JSON or passes the
// bound, and members that would change what the objects already written
// are (the objects or the request given again, another desiredAPIVersion),
// which the API server never writes. The rest of a body that failed on an
// object is read and dropped, so that the connection stays usable.
func (s *reviewStream) judgeTheRest(review *conversionReview, readErr error) {
	stopped := errors.Is(readErr, errStopReading)
	if stopped {
		_, _ = io.Copy(io.Discard, s.body)
	}
	var tooLarge *http.MaxBytesError
	switch {
	case s.objectsAgain:
		s.fail(errors.New("conversion review gives its objects again after the first of them were converted"))
	case stopped: // it failed on an object, and says which
	case errors.As(readErr, &tooLarge):
		reviewLog(s.ctx).Error(readErr, "Refusing a conversion review over the size bound", "limit", s.h.maxBytes)
		s.fail(fmt.Errorf("conversion review over %d bytes", s.h.maxBytes))
	case readErr != nil:
		reviewLog(s.ctx).Error(readErr, "Cannot read a conversion review")
		s.fail(fmt.Errorf("reading the conversion review, %d objects in: %w", s.next, readErr))
	case review.request() != s.req:
		s.fail(errors.New("conversion review gives its request again after its objects were converted"))
	case s.req.DesiredAPIVersion != s.desired:
		s.fail(fmt.Errorf("conversion review gives desiredAPIVersion %q after its objects were converted to %q",
			s.req.DesiredAPIVersion, s.desired))
	}
}
