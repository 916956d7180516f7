package testenv

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/uuid"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// PutInEtcd stores object, the JSON of a minitask object with its apiVersion
// and kind, as resource (tasks, taskruns) in etcd itself, past every check
// of the API server, as an earlier release or a client that got around
// admission could have. It gives the object its metadata (name, namespace,
// a uid, a creation time) and waits until the API server sees it.
func (e *Env) PutInEtcd(t testing.TB, resource, namespace, name string, object []byte) {
	t.Helper()
	obj := &unstructured.Unstructured{}
	if err := json.Unmarshal(object, &obj.Object); err != nil {
		t.Fatalf("reading the object to store: %v", err)
	}
	obj.SetName(name)
	obj.SetNamespace(namespace)
	obj.SetUID(uuid.NewUUID())
	obj.SetCreationTimestamp(metav1.Now())
	data, err := json.Marshal(obj.Object)
	if err != nil {
		t.Fatal(err)
	}
	etcd, err := clientv3.New(clientv3.Config{Endpoints: []string{e.EtcdEndpoint}, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatalf("connecting to etcd: %v", err)
	}
	defer etcd.Close()
	key := "/registry/" + obj.GroupVersionKind().Group + "/" + resource + "/" + namespace + "/" + name
	if _, err := etcd.Put(context.Background(), key, string(data)); err != nil {
		t.Fatalf("writing %s to etcd: %v", key, err)
	}
	// The API server learns of it through its watch of etcd.
	probe := &unstructured.Unstructured{}
	probe.SetGroupVersionKind(obj.GroupVersionKind())
	Eventually(t, func() (bool, string) {
		err := e.Client.Get(context.Background(), client.ObjectKey{Namespace: namespace, Name: name}, probe)
		return err == nil, "the API server does not see " + key
	}, "%s in the API server", key)
}
