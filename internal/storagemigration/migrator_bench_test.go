package storagemigration_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/minitask-dev/minitask/apis/v1beta1"
	"github.com/minitask-dev/minitask/internal/storagemigration"
	"github.com/minitask-dev/minitask/internal/testing/cpustat"
	"github.com/minitask-dev/minitask/internal/testing/promscrape"
	"github.com/minitask-dev/minitask/internal/testing/testenv"
)

// BenchmarkStorageMigration times the migration an upgrade triggers: 5,000
// Tasks and 5,000 finished TaskRuns stored as v1alpha1, then v1beta1 made
// the storage version, then the Migrator rewriting both CRDs side by side,
// one MigrateCRD each, as the manager does (Migrator.Start runs a goroutine
// per CRD; it retries forever, so it is not called here), through a client
// configured as the manager's is (no client-side rate limit). Only the
// migration is timed. It ignores b.N: run it with -benchtime=1x. With -short
// (no API server) it is skipped.
//
// A rewrite costs the API server about twice what a create does, and the
// benchmark shows why (admission-passes/object, etcd-reads/object): it runs
// the update path twice. The watch cache hands etcd's update its copy of
// the object; the patched object encodes to the same bytes as that copy, so
// the API server, to be sure it does not skip a needed write, reads the
// object from etcd (stored as v1alpha1: a conversion review) and runs the
// patch, admission and validation again before it writes. Any write that
// changes nothing takes that path, kube-storage-version-migrator's too; no
// client can avoid it.
//
// Each rewrite costs kube-apiserver far more CPU than the webhook or etcd
// (a read converted by the webhook, the patch applied and validated, CEL
// rules included, managed fields, the write, the v1alpha1 watch cache's
// conversion of the change), so the migration is bound by kube-apiserver's
// CPU. Beside the time it reports the CPU seconds kube-apiserver, etcd and
// this process (the webhook and the Migrator) used, and the same for the
// creation of the objects as a reference: a write each, as the rewrites are,
// and the migration's time over the creation's (migrate-vs-create).
// measuredProcesses are the processes whose CPU seconds
// BenchmarkStorageMigration reports: envtest's, and this one.
var measuredProcesses = []string{"kube-apiserver", "etcd", cpustat.Self}

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
	createBefore, createScrapeBefore := cpustat.ReadChildren(b), promscrape.APIServer(b, env.Config)
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
	created := time.Since(start)
	createAfter, createScrapeAfter := cpustat.ReadChildren(b), promscrape.APIServer(b, env.Config)
	b.Logf("created %d objects stored as v1alpha1 in %v", 2*perKind, created.Round(time.Millisecond))
	setStorageVersion(b, "v1beta1")

	m := &storagemigration.Migrator{Reader: c, Writer: c}
	b.ResetTimer()
	before, scrapeBefore := cpustat.ReadChildren(b), promscrape.APIServer(b, env.Config)
	start = time.Now()
	g, gctx := errgroup.WithContext(ctx)
	for _, crd := range storagemigration.CRDs {
		g.Go(func() error {
			if _, err := m.MigrateCRD(gctx, crd); err != nil {
				return fmt.Errorf("migrating %s: %w", crd, err)
			}
			return nil
		})
	}
	err = g.Wait()
	took := time.Since(start)
	b.StopTimer()
	after, scrapeAfter := cpustat.ReadChildren(b), promscrape.APIServer(b, env.Config)
	if err != nil {
		b.Fatal(err)
	}

	left := storedAPIVersions(b, etcd, ns)["minitask.dev/v1alpha1"]
	b.ReportMetric(took.Seconds(), "migrate-s")
	b.ReportMetric(float64(2*perKind)/took.Seconds(), "objects/s")
	b.ReportMetric(float64(left), "v1alpha1-left")
	// Reported only now: ResetTimer forgets the metrics reported before it.
	b.ReportMetric(created.Seconds(), "create-s")
	// The goal's figure: the migration against creating the same objects on
	// the same API server, a write each, as a rewrite is. Both run in the
	// same minutes, so the ratio holds across machines and loads where the
	// seconds alone do not.
	b.ReportMetric(took.Seconds()/created.Seconds(), "migrate-vs-create")
	cpustat.Report(b, createBefore, createAfter, "create-", measuredProcesses...)
	cpustat.Report(b, before, after, "", measuredProcesses...)
	perObject := func(before, after cpustat.Seconds) float64 {
		return 1000 * (after["kube-apiserver"] - before["kube-apiserver"]) / float64(2*perKind)
	}
	b.ReportMetric(perObject(before, after), "kube-apiserver-cpu-ms/object")
	b.ReportMetric(perObject(createBefore, createAfter), "create-kube-apiserver-cpu-ms/object")
	reportAPIServerWork(b, "", "UPDATE", "update", scrapeBefore, scrapeAfter, 2*perKind)
	reportAPIServerWork(b, "create-", "CREATE", "create", createScrapeBefore, createScrapeAfter, 2*perKind)
	b.ReportMetric(0, "ns/op")
	if left != 0 {
		b.Errorf("%d objects are still stored as v1alpha1", left)
	}
}

// reportAPIServerWork reports, per object of n, between two scrapes of the
// API server's metrics: how many times it ran the admission chain's
// validating step for operation (the metric has no resource label; nothing
// else writes during the benchmark) and the milliseconds it spent there,
// and how many reads and writes (etcdWrite) it sent etcd for minitask's
// resources.
func reportAPIServerWork(b *testing.B, prefix, operation, etcdWrite string, before, after promscrape.Families, n int) {
	perObject := func(family string, labels map[string]string) float64 {
		return (after.Sum(family, labels) - before.Sum(family, labels)) / float64(n)
	}
	b.ReportMetric(perObject("apiserver_admission_step_admission_duration_seconds",
		map[string]string{"operation": operation, "type": "validate"}), prefix+"admission-passes/object")
	// Where the admission passes spend their time: the whole validating step,
	// the CEL match conditions deciding which webhooks to call, and the calls.
	msPerObject := func(family string, labels map[string]string) float64 {
		return 1000 * (after.SampleSum(family, labels) - before.SampleSum(family, labels)) / float64(n)
	}
	b.ReportMetric(msPerObject("apiserver_admission_step_admission_duration_seconds",
		map[string]string{"operation": operation, "type": "validate"}), prefix+"admission-validate-ms/object")
	b.ReportMetric(msPerObject("apiserver_admission_match_condition_evaluation_seconds", nil), prefix+"match-conditions-ms/object")
	b.ReportMetric(msPerObject("apiserver_admission_webhook_admission_duration_seconds",
		map[string]string{"operation": operation}), prefix+"webhook-calls-ms/object")
	b.ReportMetric(perObject("etcd_requests_total", map[string]string{"group": v1beta1.GroupVersion.Group, "operation": "get"}),
		prefix+"etcd-reads/object")
	b.ReportMetric(perObject("etcd_requests_total", map[string]string{"group": v1beta1.GroupVersion.Group, "operation": etcdWrite}),
		prefix+"etcd-writes/object")
}
