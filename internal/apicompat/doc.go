// Package apicompat is minitask's API compatibility gate: it compares the
// CRDs being built with every frozen release and reports each change that
// would break an object already stored or a client of a released version.
//
// It works on the API server's own structural schemas
// (k8s.io/apiextensions-apiserver/pkg/apiserver/schema), not on YAML text, so
// that what it compares is what the API server validates and prunes with.
// docs/api-compatibility.md lists the rules and how to record a reviewed
// exception.
package apicompat
