package validation

import (
	"context"
	"fmt"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// serviceAccountUse is what a TaskRun's creator is asked for before its
// run's Pod may run as the ServiceAccount it names: either "use" of that
// ServiceAccount, the grant made for this purpose, or "create" on Pods,
// since whoever may create Pods in the namespace may name any of its
// ServiceAccounts in one directly and gains nothing through a TaskRun.
type serviceAccountUse struct {
	namespace, name string
}

// permissions are the two SubjectAccessReview questions, in the order they
// are asked: the narrow grant first, which is the one docs/security.md
// tells administrators to give.
func (u serviceAccountUse) permissions() []authorizationv1.ResourceAttributes {
	return []authorizationv1.ResourceAttributes{
		{Namespace: u.namespace, Verb: "use", Group: "", Resource: "serviceaccounts", Name: u.name},
		{Namespace: u.namespace, Verb: "create", Group: "", Resource: "pods"},
	}
}

// refusal is the detail of the Forbidden error a creator without either
// permission gets: it names both, so that an administrator knows what to grant.
func (u serviceAccountUse) refusal(user string) string {
	return fmt.Sprintf(`user %q may not use ServiceAccount %q in namespace %q: needs "use" on serviceaccounts %q or "create" on pods`,
		user, u.name, u.namespace, u.name)
}

// allowed asks the API server's authorizer, with one SubjectAccessReview per
// permission, whether user holds either. An error means that the authorizer
// could not be asked, never that the answer was no.
func (u serviceAccountUse) allowed(ctx context.Context, c client.Client, user authenticationv1.UserInfo) (bool, error) {
	for _, attrs := range u.permissions() {
		review := &authorizationv1.SubjectAccessReview{Spec: subjectAccessReviewSpec(user, attrs)}
		if err := c.Create(ctx, review); err != nil {
			return false, fmt.Errorf("creating a SubjectAccessReview of %q on %s %q in namespace %q for user %q: %w",
				attrs.Verb, attrs.Resource, attrs.Name, attrs.Namespace, user.Username, err)
		}
		if review.Status.Allowed {
			return true, nil
		}
	}
	return false, nil
}

// subjectAccessReviewSpec asks about attrs for the user exactly as the API
// server authenticated them: groups and extra (scopes, for one) can grant or
// restrict as much as the name.
func subjectAccessReviewSpec(user authenticationv1.UserInfo, attrs authorizationv1.ResourceAttributes) authorizationv1.SubjectAccessReviewSpec {
	var extra map[string]authorizationv1.ExtraValue
	if len(user.Extra) > 0 {
		extra = make(map[string]authorizationv1.ExtraValue, len(user.Extra))
		for k, v := range user.Extra {
			extra[k] = authorizationv1.ExtraValue(v)
		}
	}
	return authorizationv1.SubjectAccessReviewSpec{
		ResourceAttributes: &attrs,
		User:               user.Username,
		UID:                user.UID,
		Groups:             user.Groups,
		Extra:              extra,
	}
}
