package timerepair

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	"github.com/minitask-dev/minitask/apis/v1beta1"
)

// pageSize is how many TaskRuns one LIST request asks for. The repair holds
// one run's bytes at a time whatever the page size (decodePage), so a
// smaller page would only mean more requests; 500 is what client-go's
// pager asks for.
const pageSize = 500

// runLister lists stored TaskRuns as JSON, page by page, without a typed or
// unstructured decode: a typed one fails on the times this package repairs,
// and an unstructured one holds every field of a page of runs as maps.
type runLister struct {
	client rest.Interface
}

// newRunLister returns a lister of v1beta1 TaskRuns through config, over
// httpClient when it is not nil (to share the manager's connections).
func newRunLister(config *rest.Config, httpClient *http.Client) (*runLister, error) {
	config = rest.CopyConfig(config)
	config.GroupVersion = &v1beta1.GroupVersion
	config.APIPath = "/apis"
	config.ContentType = "application/json"
	config.AcceptContentTypes = "application/json"
	// Decodes only the API server's errors (metav1.Status); pages are read raw.
	config.NegotiatedSerializer = scheme.Codecs.WithoutConversion()
	// v1beta1 is deprecated from release 6, and the API server says so on
	// every page; the repair reads it on purpose (see the package doc), so
	// the manager's log need not repeat the warning at each start.
	config.WarningHandler = rest.NoWarnings{}
	if httpClient == nil {
		var err error
		if httpClient, err = rest.HTTPClientFor(config); err != nil {
			return nil, fmt.Errorf("building the HTTP client for listing TaskRuns: %w", err)
		}
	}
	client, err := rest.RESTClientForConfigAndClient(config, httpClient)
	if err != nil {
		return nil, fmt.Errorf("building the REST client for listing TaskRuns: %w", err)
	}
	return &runLister{client: client}, nil
}

// listPage lists the page of TaskRuns in every namespace that continueToken
// names (the first when empty), visiting each run in the order listed, and
// returns the next page's token, empty after the last page.
func (l *runLister) listPage(ctx context.Context, continueToken string, visit func(*storedRun) error) (string, error) {
	request := l.client.Get().Resource("taskruns").Param("limit", strconv.Itoa(pageSize))
	if continueToken != "" {
		request = request.Param("continue", continueToken)
	}
	body, err := request.Stream(ctx)
	if err != nil {
		return "", err
	}
	defer body.Close()
	return decodePage(body, visit)
}

// getRun reads one TaskRun as stored, as listPage reads each of a page's:
// a field of an unexpected JSON type is left empty, not an error.
func (l *runLister) getRun(ctx context.Context, namespace, name string) (*storedRun, error) {
	body, err := l.client.Get().Namespace(namespace).Resource("taskruns").Name(name).DoRaw(ctx)
	if err != nil {
		return nil, err
	}
	var run storedRun
	var typeErr *json.UnmarshalTypeError
	if err := json.Unmarshal(body, &run); err != nil && !errors.As(err, &typeErr) {
		return nil, fmt.Errorf("reading TaskRun %s/%s: %w", namespace, name, err)
	}
	return &run, nil
}
