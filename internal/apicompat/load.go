package apicompat

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// CRDSet is a set of CRDs by name: a frozen release's, or the ones being built.
type CRDSet map[string]*apiextensionsv1.CustomResourceDefinition

// Release is a frozen release's CRDs under the release's name.
type Release struct {
	Name string
	// File is the file the release was read from, which messages name for
	// the reader to open: release-2-crds.yaml. Empty for a release made in
	// memory, which messages name by Name.
	File string
	// Version is the release's version (its CRDs' minitask.dev/release
	// annotation, e.g. v0.2.0): it orders the releases.
	Version string
	CRDs    CRDSet
}

// ReleaseAnnotation is the annotation on each CRD of a frozen release that
// gives the release's version.
const ReleaseAnnotation = "minitask.dev/release"

// LoadRelease reads a frozen release from one YAML file of CRDs. The release
// is named after the file: testdata/release-2-crds.yaml is release-2. Every
// CRD must carry the same ReleaseAnnotation, the release's version.
func LoadRelease(path string) (Release, error) {
	crds, err := LoadCRDs(path)
	if err != nil {
		return Release{}, err
	}
	version := ""
	for _, name := range sortedKeys(crds) {
		v := crds[name].Annotations[ReleaseAnnotation]
		if v == "" || (version != "" && v != version) {
			return Release{}, fmt.Errorf("%s: CRD %s has %s %q: every CRD of a frozen release needs the release's version there",
				path, name, ReleaseAnnotation, v)
		}
		version = v
	}
	name := strings.TrimSuffix(strings.TrimSuffix(filepath.Base(path), filepath.Ext(path)), "-crds")
	return Release{Name: name, File: filepath.Base(path), Version: version, CRDs: crds}, nil
}

// source names the release in messages: its file, else its name.
func (r Release) source() string {
	if r.File != "" {
		return r.File
	}
	return r.Name
}

// LoadCRDs reads every CRD in the YAML files at paths (files, or directories
// whose *.yaml files are read).
func LoadCRDs(paths ...string) (CRDSet, error) {
	set := CRDSet{}
	for _, path := range paths {
		files, err := yamlFiles(path)
		if err != nil {
			return nil, err
		}
		for _, file := range files {
			if err := readCRDs(file, set); err != nil {
				return nil, err
			}
		}
	}
	return set, nil
}

func readCRDs(file string, set CRDSet) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return fmt.Errorf("reading CRDs: %w", err)
	}
	decoder := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := decoder.Decode(crd); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("decoding a CRD in %s: %w", file, err)
		}
		if crd.Kind == "" {
			continue // an empty document
		}
		if crd.Kind != "CustomResourceDefinition" {
			return fmt.Errorf("%s: %s %q is not a CustomResourceDefinition", file, crd.Kind, crd.Name)
		}
		set[crd.Name] = crd
	}
}

// structural turns one version's OpenAPI schema into the structural schema
// the API server validates and prunes with.
func structural(crd *apiextensionsv1.CustomResourceDefinition, v *apiextensionsv1.CustomResourceDefinitionVersion) (*schema.Structural, error) {
	if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
		return &schema.Structural{Generic: schema.Generic{Type: "object"}, Extensions: schema.Extensions{XPreserveUnknownFields: true}}, nil
	}
	internal := &apiextensions.JSONSchemaProps{}
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(v.Schema.OpenAPIV3Schema, internal, nil); err != nil {
		return nil, fmt.Errorf("%s %s: converting the schema: %w", crd.Name, v.Name, err)
	}
	s, err := schema.NewStructural(internal)
	if err != nil {
		return nil, fmt.Errorf("%s %s: the schema is not structural: %w", crd.Name, v.Name, err)
	}
	return s, nil
}

func version(crd *apiextensionsv1.CustomResourceDefinition, name string) *apiextensionsv1.CustomResourceDefinitionVersion {
	for i := range crd.Spec.Versions {
		if crd.Spec.Versions[i].Name == name {
			return &crd.Spec.Versions[i]
		}
	}
	return nil
}

func storageVersion(crd *apiextensionsv1.CustomResourceDefinition) string {
	for _, v := range crd.Spec.Versions {
		if v.Storage {
			return v.Name
		}
	}
	return ""
}

// yamlFiles is path if it is a file, else the *.yaml files of the directory
// path.
func yamlFiles(path string) ([]string, error) {
	if info, err := os.Stat(path); err == nil && info.IsDir() {
		return filepath.Glob(filepath.Join(path, "*.yaml"))
	}
	// A path that is not there is read as a file, which says so.
	return []string{path}, nil
}

// structuralPair is the structural schemas of a version of an older CRD
// and of the same version of the current one, as the checks compare them.
func structuralPair(old *apiextensionsv1.CustomResourceDefinition, ov *apiextensionsv1.CustomResourceDefinitionVersion,
	cur *apiextensionsv1.CustomResourceDefinition, cv *apiextensionsv1.CustomResourceDefinitionVersion,
) (oldSchema, curSchema *schema.Structural, err error) {
	if oldSchema, err = structural(old, ov); err != nil {
		return nil, nil, err
	}
	if curSchema, err = structural(cur, cv); err != nil {
		return nil, nil, err
	}
	return oldSchema, curSchema, nil
}
