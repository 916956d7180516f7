// Package storedversions says what a CRD's status.storedVersions tells of
// the objects earlier releases left in etcd: whether one of them may still
// hold a time Go cannot read, which no typed decode takes.
//
// Only two releases let such a time in. The first release stored TaskRuns
// as v1alpha1 and release 2 as v1beta1, and both CRDs checked times only
// against OpenAPI's date-time format (2024-05-01t10:00:00z, +25:00). From
// release 3 every time field has a pattern, and a condition's time a
// webhook (webhooks/conditiontime), in every version, so that no write has
// stored one since; a run that holds one keeps it only as it was stored,
// in v1alpha1 or v1beta1. It cannot reach v1: release 6's storage
// migration rewrites a run through v1, and the stash guard refuses a v1
// write of a run no typed decode takes (webhooks/stashguard), so such a run
// stays in its version, and the API server keeps that version in
// storedVersions, until the time repair (internal/timerepair) has made it
// readable. A version leaves storedVersions only once every object stored
// in it has been rewritten in another.
//
// Hence the rule: objects may hold such a time unless every version that
// storedVersions lists is one that only releases refusing such times have
// stored (v1, stored from release 6). An empty list, a version this release
// does not know (a later release's), or a CRD not read are not known to be
// clean, and count as may-hold: the callers then do what they did before
// this rule (the repair reads, the guard decodes).
package storedversions
