package conversion_test

import (
	"github.com/minitask-dev/minitask/webhooks"
	"github.com/minitask-dev/minitask/webhooks/conversion"
)

// The tests that need an API server serve every webhook through it, as the
// manager does; only this external test package can import webhooks, which
// imports conversion.
func init() { conversion.SetupWebhooks = webhooks.SetupWithManager }
