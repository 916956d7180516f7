package apicompat

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// WebhookPath is a path of the manager's webhook server that the
// configuration being built names: the API server calls it once that
// configuration is applied, whichever release's replica answers.
type WebhookPath struct {
	// Path is the URL path, e.g. /convert.
	Path string
	// Caller is the webhook that names it (vtask-v1.minitask.dev), or for
	// a conversion webhook the CRD (tasks.minitask.dev).
	Caller string
	// File is the file that names it.
	File string
}

// ServedPaths is what a frozen release's manager serves, read from its
// served-paths file (test/e2e/testdata/release-N-webhook-paths.txt).
type ServedPaths struct {
	// Release is the release's name, after its file: release-6.
	Release string
	// File is the file's base name, which messages name.
	File  string
	Paths []string
}

// ServedPathsSuffix ends the name of a served-paths file; what comes
// before it names the release.
const ServedPathsSuffix = "-webhook-paths.txt"

// LoadServedPaths reads a served-paths file: one path a line; blank lines
// and lines that start with # are skipped.
func LoadServedPaths(path string) (ServedPaths, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return ServedPaths{}, fmt.Errorf("reading served webhook paths: %w", err)
	}
	base := filepath.Base(path)
	served := ServedPaths{Release: strings.TrimSuffix(base, ServedPathsSuffix), File: base}
	scanner := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; scanner.Scan(); n++ {
		line := strings.TrimSpace(scanner.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if !strings.HasPrefix(line, "/") || strings.ContainsAny(line, " \t") {
			return ServedPaths{}, fmt.Errorf("%s:%d: %q is not a URL path", path, n, line)
		}
		served.Paths = append(served.Paths, line)
	}
	if len(served.Paths) == 0 {
		return ServedPaths{}, fmt.Errorf("%s lists no path", path)
	}
	return served, nil
}

// WriteServedPaths writes paths in the served-paths file's format, after
// header's lines as comments.
func WriteServedPaths(w io.Writer, header []string, paths []string) error {
	var b strings.Builder
	for _, line := range header {
		b.WriteString(strings.TrimRight("# "+line, " ") + "\n")
	}
	for _, p := range paths {
		b.WriteString(p + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// LoadWebhookPaths reads the paths that the YAML files at paths (files, or
// directories whose *.yaml files are read) name: each webhook's of a
// ValidatingWebhookConfiguration or MutatingWebhookConfiguration, and a
// CustomResourceDefinition's conversion webhook's (a CRD or a patch of
// one). Other kinds are skipped. A clientConfig that names a URL instead
// of a Service is refused: the gate cannot tell whose server it is.
func LoadWebhookPaths(paths ...string) ([]WebhookPath, error) {
	var found []WebhookPath
	for _, path := range paths {
		files, err := yamlFiles(path)
		if err != nil {
			return nil, err
		}
		for _, file := range files {
			ps, err := readWebhookPaths(file)
			if err != nil {
				return nil, err
			}
			found = append(found, ps...)
		}
	}
	return found, nil
}

func readWebhookPaths(file string) ([]WebhookPath, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("reading webhook paths: %w", err)
	}
	var found []WebhookPath
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return found, nil
		}
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", file, err)
		}
		ps, err := webhookPathsIn(doc)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		for i := range ps {
			ps[i].File = file
		}
		found = append(found, ps...)
	}
}

// webhookPathsIn returns the paths one YAML document names.
func webhookPathsIn(doc []byte) ([]WebhookPath, error) {
	var meta metav1.TypeMeta
	if err := yaml.Unmarshal(doc, &meta); err != nil {
		return nil, err
	}
	var found []WebhookPath
	add := func(caller string, service *admissionregistrationv1.ServiceReference, url *string) error {
		if service == nil {
			return fmt.Errorf("%s calls %s, not a Service: the gate cannot tell whose server that is", caller, ptrString(url))
		}
		path := "/"
		if service.Path != nil {
			path = *service.Path
		}
		found = append(found, WebhookPath{Path: path, Caller: caller})
		return nil
	}
	switch meta.Kind {
	case "ValidatingWebhookConfiguration":
		var c admissionregistrationv1.ValidatingWebhookConfiguration
		if err := yaml.Unmarshal(doc, &c); err != nil {
			return nil, err
		}
		for _, w := range c.Webhooks {
			if err := add(w.Name, w.ClientConfig.Service, w.ClientConfig.URL); err != nil {
				return nil, err
			}
		}
	case "MutatingWebhookConfiguration":
		var c admissionregistrationv1.MutatingWebhookConfiguration
		if err := yaml.Unmarshal(doc, &c); err != nil {
			return nil, err
		}
		for _, w := range c.Webhooks {
			if err := add(w.Name, w.ClientConfig.Service, w.ClientConfig.URL); err != nil {
				return nil, err
			}
		}
	case "CustomResourceDefinition":
		var crd apiextensionsv1.CustomResourceDefinition
		if err := yaml.Unmarshal(doc, &crd); err != nil {
			return nil, err
		}
		conv := crd.Spec.Conversion
		if conv == nil || conv.Strategy != apiextensionsv1.WebhookConverter || conv.Webhook == nil || conv.Webhook.ClientConfig == nil {
			break
		}
		config := conv.Webhook.ClientConfig
		var service *admissionregistrationv1.ServiceReference
		if config.Service != nil {
			service = &admissionregistrationv1.ServiceReference{Path: config.Service.Path}
		}
		if err := add(crd.Name, service, config.URL); err != nil {
			return nil, err
		}
	}
	return found, nil
}

func ptrString(s *string) string {
	if s == nil {
		return "nothing"
	}
	return *s
}

// CheckWebhookPaths reports each path that configured names and the newest
// frozen release's manager does not serve (WebhookPathNotServed). During a
// rolling update from that release, the API server calls the new
// configuration's paths while the release's replicas still answer, and a
// path they lack answers 404: with failurePolicy Fail, each write the
// webhook matches is refused until the rollout ends, and each conversion
// fails. The release after it, rolled back, must be judged by the same
// rule, which is why ServedPaths is frozen with each release.
func CheckWebhookPaths(served ServedPaths, configured []WebhookPath) []Problem {
	var problems []Problem
	for _, w := range configured {
		if slices.Contains(served.Paths, w.Path) {
			continue
		}
		problems = append(problems, Problem{Release: served.Release, CRD: w.Caller, Path: w.Path, Kind: WebhookPathNotServed,
			Detail: fmt.Sprintf("%s names it, and %s does not list it: a rolling update from %s would send it to replicas "+
				"that answer 404; serve it in %s first", w.File, served.File, served.Release, served.Release)})
	}
	sortProblems(problems)
	return problems
}
