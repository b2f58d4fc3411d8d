package validate

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

// objects holds the Kubernetes objects of one rendering of the chart, by type,
// and all of them in the order they were added.
type objects struct {
	deployments     []*appsv1.Deployment
	services        []*corev1.Service
	configMaps      []*corev1.ConfigMap
	secrets         []*corev1.Secret
	serviceAccounts []*corev1.ServiceAccount
	ingresses       []*networkingv1.Ingress
	hpas            []*autoscalingv2.HorizontalPodAutoscaler
	pdbs            []*policyv1.PodDisruptionBudget
	networkPolicies []*networkingv1.NetworkPolicy
	jobs            []*batchv1.Job
	serviceMonitors []*serviceMonitor
	all             []metav1.Object
}

// serviceMonitor is the part of the Prometheus Operator's ServiceMonitor
// (monitoring.coreos.com/v1) that the chart writes. Decoding strictly into it
// rejects any other field, so a field added to the template must be added
// here, checked against the operator's API reference.
type serviceMonitor struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              struct {
		Selector  metav1.LabelSelector `json:"selector"`
		Endpoints []struct {
			Port          string `json:"port,omitempty"`
			Path          string `json:"path,omitempty"`
			Interval      string `json:"interval,omitempty"`
			ScrapeTimeout string `json:"scrapeTimeout,omitempty"`
		} `json:"endpoints"`
	} `json:"spec"`
}

// decodeManifest decodes one YAML document strictly into the Kubernetes type
// its apiVersion and kind name: unknown or duplicate fields and wrong value
// types are errors, as are kinds the chart is not expected to render.
func decodeManifest(doc string) (any, error) {
	var tm metav1.TypeMeta
	if err := yaml.Unmarshal([]byte(doc), &tm); err != nil {
		return nil, fmt.Errorf("read apiVersion and kind: %w", err)
	}
	var obj any
	switch tm.APIVersion + " " + tm.Kind {
	case "apps/v1 Deployment":
		obj = &appsv1.Deployment{}
	case "v1 Service":
		obj = &corev1.Service{}
	case "v1 ConfigMap":
		obj = &corev1.ConfigMap{}
	case "v1 Secret":
		obj = &corev1.Secret{}
	case "v1 ServiceAccount":
		obj = &corev1.ServiceAccount{}
	case "v1 Pod":
		obj = &corev1.Pod{}
	case "networking.k8s.io/v1 Ingress":
		obj = &networkingv1.Ingress{}
	case "autoscaling/v2 HorizontalPodAutoscaler":
		obj = &autoscalingv2.HorizontalPodAutoscaler{}
	case "policy/v1 PodDisruptionBudget":
		obj = &policyv1.PodDisruptionBudget{}
	case "networking.k8s.io/v1 NetworkPolicy":
		obj = &networkingv1.NetworkPolicy{}
	case "batch/v1 Job":
		obj = &batchv1.Job{}
	case "monitoring.coreos.com/v1 ServiceMonitor":
		obj = &serviceMonitor{}
	default:
		return nil, fmt.Errorf("unexpected object apiVersion %q kind %q", tm.APIVersion, tm.Kind)
	}
	if err := yaml.UnmarshalStrict([]byte(doc), obj); err != nil {
		return nil, fmt.Errorf("decode %s %s: %w", tm.APIVersion, tm.Kind, err)
	}
	return obj, nil
}

// add files a decoded object under its type; other kinds (a test Pod) are
// not part of the release and are left out.
func (o *objects) add(obj any) {
	switch v := obj.(type) {
	case *appsv1.Deployment:
		o.deployments = append(o.deployments, v)
	case *corev1.Service:
		o.services = append(o.services, v)
	case *corev1.ConfigMap:
		o.configMaps = append(o.configMaps, v)
	case *corev1.Secret:
		o.secrets = append(o.secrets, v)
	case *corev1.ServiceAccount:
		o.serviceAccounts = append(o.serviceAccounts, v)
	case *networkingv1.Ingress:
		o.ingresses = append(o.ingresses, v)
	case *autoscalingv2.HorizontalPodAutoscaler:
		o.hpas = append(o.hpas, v)
	case *policyv1.PodDisruptionBudget:
		o.pdbs = append(o.pdbs, v)
	case *networkingv1.NetworkPolicy:
		o.networkPolicies = append(o.networkPolicies, v)
	case *batchv1.Job:
		o.jobs = append(o.jobs, v)
	case *serviceMonitor:
		o.serviceMonitors = append(o.serviceMonitors, v)
	default:
		return
	}
	o.all = append(o.all, obj.(metav1.Object))
}

// kinds lists the objects as sorted "Kind" entries, one per object.
func (o *objects) kinds() []string {
	var ks []string
	for _, m := range o.all {
		ks = append(ks, m.(interface{ GetObjectKind() schema.ObjectKind }).GetObjectKind().GroupVersionKind().Kind)
	}
	sort.Strings(ks)
	return ks
}

const validDeployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: mg
spec:
  replicas: 2
  selector:
    matchLabels: {app: mg}
  template:
    metadata:
      labels: {app: mg}
    spec:
      containers:
        - name: mergeguard
          image: mergeguard:dev
`

// TestDecodeManifestRejectsBrokenManifests shows that the strict decoder the
// chart tests rely on rejects what the API server would reject or silently
// drop.
func TestDecodeManifestRejectsBrokenManifests(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		doc     string
		wantErr string // substring of the error; empty means valid
	}{
		{name: "valid", doc: validDeployment},
		{
			name:    "unknown field",
			doc:     strings.Replace(validDeployment, "  replicas: 2", "  replica: 2", 1),
			wantErr: `unknown field "replica"`,
		},
		{
			name: "field at the wrong level",
			doc: strings.Replace(validDeployment, "      containers:",
				"      readinessProbe: {httpGet: {path: /readyz, port: 8080}}\n      containers:", 1),
			wantErr: `unknown field "readinessProbe"`,
		},
		{
			name:    "wrong type",
			doc:     strings.Replace(validDeployment, "replicas: 2", "replicas: two", 1),
			wantErr: "cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32",
		},
		{
			name:    "duplicate field",
			doc:     strings.Replace(validDeployment, "  replicas: 2", "  replicas: 2\n  replicas: 3", 1),
			wantErr: `key "replicas" already set in map`,
		},
		{
			name:    "unexpected kind",
			doc:     strings.Replace(validDeployment, "kind: Deployment", "kind: DaemonSet", 1),
			wantErr: `unexpected object apiVersion "apps/v1" kind "DaemonSet"`,
		},
		{
			name:    "old API version",
			doc:     strings.Replace(validDeployment, "apiVersion: apps/v1", "apiVersion: extensions/v1beta1", 1),
			wantErr: `unexpected object apiVersion "extensions/v1beta1"`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := decodeManifest(tt.doc)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("decodeManifest: unexpected error: %v", err)
			case tt.wantErr != "" && err == nil:
				t.Fatalf("decodeManifest accepted a broken manifest, want error containing %q", tt.wantErr)
			case tt.wantErr != "" && !strings.Contains(err.Error(), tt.wantErr):
				t.Fatalf("decodeManifest error = %q, want it to contain %q", err, tt.wantErr)
			}
		})
	}
}
