package stashguard

import (
	"context"
	"fmt"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/model"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	schemaobjectmeta "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/cel/common"
	"sigs.k8s.io/yaml"

	"github.com/minitask-dev/minitask/config/crd"
)

// hubRules are every rule of one kind's v1beta1 schema: OpenAPI validation,
// list types and CEL (transition rules included), built and applied with the
// API server's own packages, as its customresource strategies do
// (k8s.io/apiextensions-apiserver/pkg/registry/customresource). A v1alpha1
// write is judged by them after conversion, so that no rule is written twice.
// They are named for releases 2 to 4, when v1beta1 was the hub; the hub is
// v1 from release 5, but v1beta1's rules are still those that the fields a
// v1alpha1 annotation carries as v1beta1 must keep.
//
// The schema comes from the CRDs this binary embeds (config/crd), not from
// the API server: they are generated from the same markers in the same
// commit as the types and converters, so they are the rules conversion was
// written for; reading them needs no API call on the admission path, no RBAC
// on CRDs, and no cache that could lag behind a CRD update. An install
// always ships the CRDs and the manager together (dist/install.yaml).
type hubRules struct {
	structural *structuralschema.Structural
	validator  apiservervalidation.SchemaValidator
	// status validates status alone, as the API server does for writes to
	// the status subresource.
	status apiservervalidation.SchemaValidator
	cel    *cel.Validator
}

// loadHubRules builds the rules of version in the CRD in file (of crd.Bases).
func loadHubRules(file, version string) (*hubRules, error) {
	data, err := crd.Bases.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", file, err)
	}
	var v1CRD apiextensionsv1.CustomResourceDefinition
	if err := yaml.UnmarshalStrict(data, &v1CRD); err != nil {
		return nil, fmt.Errorf("decoding %s: %w", file, err)
	}
	var internal apiextensions.CustomResourceDefinition
	if err := apiextensionsv1.Convert_v1_CustomResourceDefinition_To_apiextensions_CustomResourceDefinition(&v1CRD, &internal, nil); err != nil {
		return nil, fmt.Errorf("converting %s to the internal version: %w", file, err)
	}
	var props *apiextensions.JSONSchemaProps
	for _, v := range internal.Spec.Versions {
		if v.Name == version && v.Schema != nil {
			props = v.Schema.OpenAPIV3Schema
		}
	}
	if props == nil {
		return nil, fmt.Errorf("%s has no schema for version %s", file, version)
	}

	r := &hubRules{}
	if r.structural, err = structuralschema.NewStructural(props); err != nil {
		return nil, fmt.Errorf("%s %s: structural schema: %w", file, version, err)
	}
	if r.validator, _, err = apiservervalidation.NewSchemaValidator(props); err != nil {
		return nil, fmt.Errorf("%s %s: schema validator: %w", file, version, err)
	}
	if status, ok := props.Properties["status"]; ok {
		if r.status, _, err = apiservervalidation.NewSchemaValidator(&status); err != nil {
			return nil, fmt.Errorf("%s %s: status schema validator: %w", file, version, err)
		}
	}
	r.cel = cel.NewValidator(r.structural, true, celconfig.PerCallLimit)
	return r, nil
}

// validateCreate judges a new object as the API server's Validate does.
func (r *hubRules) validateCreate(ctx context.Context, obj map[string]any) field.ErrorList {
	errs := apiservervalidation.ValidateCustomResource(nil, obj, r.validator)
	errs = append(errs, schemaobjectmeta.Validate(ctx, nil, obj, r.structural, false)...)
	errs = append(errs, listtype.ValidateListSetsAndMaps(nil, r.structural, obj)...)
	return append(errs, r.validateCEL(ctx, errs, obj, nil)...)
}

// validateUpdate judges a changed object as the API server's ValidateUpdate
// does: what the update leaves as it was is not judged again (ratcheting),
// and transition rules see old.
func (r *hubRules) validateUpdate(ctx context.Context, obj, old map[string]any) field.ErrorList {
	correlated := common.NewCorrelatedObject(obj, old, &model.Structural{Structural: r.structural})
	errs := apiservervalidation.ValidateCustomResourceUpdate(nil, obj, old, r.validator,
		apiservervalidation.WithRatcheting(correlated))
	errs = append(errs, schemaobjectmeta.Validate(ctx, nil, obj, r.structural, false)...)
	if oldErrs := listtype.ValidateListSetsAndMaps(nil, r.structural, old); len(oldErrs) == 0 {
		errs = append(errs, listtype.ValidateListSetsAndMaps(nil, r.structural, obj)...)
	}
	return append(errs, r.validateCEL(ctx, errs, obj, old, cel.WithRatcheting(correlated))...)
}

// validateStatusUpdate judges a write to the status subresource as the
// API server's status strategy does: the schema of status alone, list
// types and CEL on the whole object.
func (r *hubRules) validateStatusUpdate(ctx context.Context, obj, old map[string]any) field.ErrorList {
	correlated := common.NewCorrelatedObject(obj, old, &model.Structural{Structural: r.structural})
	var errs field.ErrorList
	if status, ok := obj["status"]; ok && r.status != nil {
		errs = apiservervalidation.ValidateCustomResourceUpdate(field.NewPath("status"), status, old["status"], r.status,
			apiservervalidation.WithRatcheting(correlated.Key("status")))
	}
	if newErrs := listtype.ValidateListSetsAndMaps(nil, r.structural, obj); len(newErrs) > 0 {
		if oldErrs := listtype.ValidateListSetsAndMaps(nil, r.structural, old); len(oldErrs) == 0 {
			errs = append(errs, newErrs...)
		}
	}
	return append(errs, r.validateCEL(ctx, errs, obj, old, cel.WithRatcheting(correlated))...)
}

// validateCEL runs the CEL rules unless errs already hold an error that
// makes them meaningless, as the API server does (its hasBlockingErr).
func (r *hubRules) validateCEL(ctx context.Context, errs field.ErrorList, obj, old map[string]any, opts ...cel.Option) field.ErrorList {
	for _, err := range errs {
		switch err.Type {
		case field.ErrorTypeNotSupported, field.ErrorTypeRequired, field.ErrorTypeTooLong, field.ErrorTypeTooMany, field.ErrorTypeTypeInvalid:
			return field.ErrorList{field.Invalid(nil, nil,
				"some validation rules were not checked because the object was invalid; correct the existing errors to complete validation")}
		}
	}
	var oldObj any
	if old != nil {
		oldObj = old
	}
	celErrs, _ := r.cel.Validate(ctx, nil, r.structural, obj, oldObj, celconfig.RuntimeCELCostBudget, opts...)
	return celErrs
}
