package testenv

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// CreateInParallel creates the n objects object(0) ... object(n-1) through c,
// workers at a time, and fails tb on the first error: how benchmarks fill an
// API server with thousands of objects quickly.
func CreateInParallel(tb testing.TB, c client.Client, workers, n int, object func(i int) client.Object) {
	tb.Helper()
	next := make(chan int)
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := range next {
				obj := object(i)
				if err := c.Create(context.Background(), obj); err != nil {
					errs <- fmt.Errorf("creating %T %s: %w", obj, obj.GetName(), err)
				}
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	close(errs)
	for err := range errs {
		tb.Fatal(err)
	}
}
