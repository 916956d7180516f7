package storagemigration_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/minitask-dev/minitask/apis/v1beta1"
	"github.com/minitask-dev/minitask/internal/storagemigration"
	"github.com/minitask-dev/minitask/internal/testing/testenv"
)

// BenchmarkStorageMigration times the migration an upgrade triggers: 5,000
// Tasks and 5,000 finished TaskRuns stored as v1alpha1, then v1beta1 made
// the storage version, then the Migrator rewriting both CRDs, through a
// client configured as the manager's is (no client-side rate limit). Only
// the migration is timed. It ignores b.N: run it with -benchtime=1x. With
// -short (no API server) it is skipped.
func BenchmarkStorageMigration(b *testing.B) {
	if env == nil {
		b.Skip("-short: needs a kube-apiserver and etcd")
	}
	const perKind = 5000
	ctx := context.Background()
	cfg := rest.CopyConfig(env.Config)
	cfg.QPS, cfg.Burst = -1, 0 // what ctrl.GetConfig gives the manager: API priority and fairness limits it
	c, err := client.New(cfg, client.Options{Scheme: env.Scheme})
	if err != nil {
		b.Fatal(err)
	}
	etcd := etcdClient(b)

	setStorageVersion(b, "v1alpha1")
	ns := env.Namespace(b)
	start := time.Now()
	testenv.CreateInParallel(b, c, 16, 2*perKind, func(i int) client.Object {
		name := fmt.Sprintf("obj-%05d", i/2)
		if i%2 == 0 {
			return &v1beta1.Task{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
				Spec: v1beta1.TaskSpec{Description: "kept in the annotation while stored as v1alpha1",
					Params: []v1beta1.ParamSpec{{Name: "target", Default: ptr.To("all")}},
					Steps:  []v1beta1.Step{{Name: "build", Image: "golang:1.26", Script: "make $(params.target)"}}}}
		}
		return &v1beta1.TaskRun{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Spec: v1beta1.TaskRunSpec{TaskRef: v1beta1.TaskRef{Name: name}, Timeout: &v1beta1.Duration{Duration: time.Hour}}}
	})
	b.Logf("created %d objects stored as v1alpha1 in %v", 2*perKind, time.Since(start).Round(time.Millisecond))
	setStorageVersion(b, "v1beta1")

	m := &storagemigration.Migrator{Reader: c, Writer: c}
	b.ResetTimer()
	start = time.Now()
	for _, crd := range storagemigration.CRDs {
		if _, err := m.MigrateCRD(ctx, crd); err != nil {
			b.Fatalf("migrating %s: %v", crd, err)
		}
	}
	took := time.Since(start)
	b.StopTimer()

	left := storedAPIVersions(b, etcd, ns)["minitask.dev/v1alpha1"]
	b.ReportMetric(took.Seconds(), "migrate-s")
	b.ReportMetric(float64(2*perKind)/took.Seconds(), "objects/s")
	b.ReportMetric(float64(left), "v1alpha1-left")
	b.ReportMetric(0, "ns/op")
	if left != 0 {
		b.Errorf("%d objects are still stored as v1alpha1", left)
	}
}
