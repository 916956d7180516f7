package certs

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

var (
	crdGVK = schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}
	vwcGVK = schema.GroupVersionKind{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "ValidatingWebhookConfiguration"}
)

// inject sets bundle as the caBundle of every CRD's conversion webhook and of
// every webhook in the validating webhook configurations, writing only what
// differs. The objects are read and written unstructured, so that fields
// newer than this client's types survive the update, with the read's
// resourceVersion as optimistic lock.
func (r *Rotator) inject(ctx context.Context, bundle []byte) error {
	caBundle := base64.StdEncoding.EncodeToString(bundle)
	for _, name := range r.cfg.CRDs {
		if err := r.injectInto(ctx, crdGVK, name, caBundle, setConversionCABundle); err != nil {
			return err
		}
	}
	for _, name := range r.cfg.ValidatingWebhookConfigurations {
		if err := r.injectInto(ctx, vwcGVK, name, caBundle, setWebhooksCABundle); err != nil {
			return err
		}
	}
	return nil
}

func (r *Rotator) injectInto(ctx context.Context, gvk schema.GroupVersionKind, name, caBundle string,
	set func(obj map[string]any, caBundle string) (bool, error)) error {
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(gvk)
	if err := r.reader.Get(ctx, client.ObjectKey{Name: name}, obj); err != nil {
		return fmt.Errorf("reading %s %s to inject the CA bundle: %w", gvk.Kind, name, err)
	}
	changed, err := set(obj.Object, caBundle)
	if err != nil {
		return fmt.Errorf("%s %s: %w", gvk.Kind, name, err)
	}
	if !changed {
		return nil
	}
	if err := r.writer.Update(ctx, obj); err != nil {
		return fmt.Errorf("injecting the CA bundle into %s %s: %w", gvk.Kind, name, err)
	}
	r.log.Info("injected the CA bundle", "kind", gvk.Kind, "name", name)
	return nil
}

// setConversionCABundle sets spec.conversion.webhook.clientConfig.caBundle of a CRD.
func setConversionCABundle(crd map[string]any, caBundle string) (bool, error) {
	path := []string{"spec", "conversion", "webhook", "clientConfig"}
	cc, found, err := unstructured.NestedMap(crd, path...)
	if err != nil {
		return false, err
	}
	if !found {
		return false, errors.New("no conversion webhook (spec.conversion.webhook.clientConfig)")
	}
	if cc["caBundle"] == caBundle {
		return false, nil
	}
	return true, unstructured.SetNestedField(crd, caBundle, append(path, "caBundle")...)
}

// setWebhooksCABundle sets webhooks[*].clientConfig.caBundle of a webhook configuration.
func setWebhooksCABundle(cfg map[string]any, caBundle string) (bool, error) {
	hooks, _, err := unstructured.NestedSlice(cfg, "webhooks")
	if err != nil {
		return false, err
	}
	if len(hooks) == 0 {
		return false, errors.New("no webhooks")
	}
	changed := false
	for i, h := range hooks {
		hook, ok := h.(map[string]any)
		if !ok {
			return false, fmt.Errorf("webhooks[%d] is not an object", i)
		}
		if cc, _, _ := unstructured.NestedMap(hook, "clientConfig"); cc["caBundle"] == caBundle {
			continue
		}
		if err := unstructured.SetNestedField(hook, caBundle, "clientConfig", "caBundle"); err != nil {
			return false, fmt.Errorf("webhooks[%d]: %w", i, err)
		}
		changed = true
	}
	if !changed {
		return false, nil
	}
	return true, unstructured.SetNestedSlice(cfg, hooks, "webhooks")
}
