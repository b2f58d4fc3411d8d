package validate

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
	"helm.sh/helm/v3/pkg/releaseutil"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"
)

const (
	chartDir  = "../helm/mergeguard"
	release   = "mg"
	namespace = "mergeguard"
)

// allFeatures turns every optional part of the chart on.
const allFeatures = `
image:
  digest: sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
imagePullSecrets:
  - name: registry
serviceAccount:
  create: false
  name: mergeguard-workload
publicURL: https://mergeguard.example.com
github:
  integrationID: 1234567
  webURL: https://github.example.com/
  v3APIURL: https://github.example.com/api/v3/
  v4APIURL: https://github.example.com/api/graphql
llm:
  baseURL: http://vllm.llm.svc:8000/v1
  model: qwen3-coder
secrets:
  existingSecret: mergeguard-secrets
config:
  workers:
    concurrency: 4
  llm:
    context_tokens: 32768
extraEnv:
  - name: SSL_CERT_DIR
    value: /etc/mergeguard/ca
extraVolumes:
  - name: ca
    configMap:
      name: corp-ca
extraVolumeMounts:
  - name: ca
    mountPath: /etc/mergeguard/ca
    readOnly: true
ingress:
  enabled: true
  className: nginx
  annotations:
    cert-manager.io/cluster-issuer: letsencrypt
  hosts:
    - host: mergeguard.example.com
      paths:
        - path: /api/github/hook
          pathType: Exact
        - path: /
          pathType: Prefix
  tls:
    - secretName: mergeguard-tls
      hosts: [mergeguard.example.com]
autoscaling:
  enabled: true
  minReplicas: 3
  maxReplicas: 10
  targetMemoryUtilizationPercentage: 80
podAnnotations:
  example.com/team: platform
podLabels:
  example.com/tier: backend
nodeSelector:
  kubernetes.io/os: linux
tolerations:
  - key: dedicated
    operator: Equal
    value: bots
    effect: NoSchedule
affinity:
  podAntiAffinity:
    preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 100
        podAffinityTerm:
          topologyKey: kubernetes.io/hostname
          labelSelector:
            matchLabels:
              app.kubernetes.io/name: mergeguard
topologySpreadConstraints:
  - maxSkew: 1
    topologyKey: topology.kubernetes.io/zone
    whenUnsatisfiable: ScheduleAnyway
    labelSelector:
      matchLabels:
        app.kubernetes.io/name: mergeguard
serviceMonitor:
  enabled: true
  labels:
    release: kube-prometheus-stack
  interval: 30s
  scrapeTimeout: 10s
networkPolicy:
  enabled: true
  ingressFrom:
    - namespaceSelector:
        matchLabels:
          kubernetes.io/metadata.name: ingress-nginx
  egress:
    - ports:
        - port: 53
          protocol: UDP
    - to:
        - ipBlock:
            cidr: 0.0.0.0/0
      ports:
        - port: 443
          protocol: TCP
migrationJob:
  enabled: true
resources:
  requests:
    cpu: 200m
    memory: 512Mi
  limits:
    memory: 1Gi
`

// chartSecrets has the chart create its Secret with every key.
const chartSecrets = `
github:
  integrationID: "42"
secrets:
  databaseURL: postgres://mergeguard:pw@db:5432/mergeguard?sslmode=require
  githubAppWebhookSecret: whsec
  githubAppPrivateKey: |
    -----BEGIN RSA PRIVATE KEY-----
    not-a-real-key
    -----END RSA PRIVATE KEY-----
  openaiAPIKey: sk-test
  apiToken: token
`

// parseValues reads a values file's text the way `helm -f` does.
func parseValues(t *testing.T, text string) map[string]any {
	t.Helper()
	vals, err := chartutil.ReadValues([]byte(text))
	if err != nil {
		t.Fatalf("parse values: %v", err)
	}
	return vals
}

// renderChart renders the chart like `helm template` with the given values
// over the chart's defaults (validated against values.schema.json) and decodes
// every manifest strictly. It also returns the rendered NOTES.txt.
func renderChart(overrides map[string]any) (*objects, string, error) {
	return renderChartAs(release, overrides)
}

// renderChartAs is renderChart for a release with another name.
func renderChartAs(releaseName string, overrides map[string]any) (*objects, string, error) {
	chrt, err := loader.Load(chartDir)
	if err != nil {
		return nil, "", fmt.Errorf("load chart: %w", err)
	}
	opts := chartutil.ReleaseOptions{Name: releaseName, Namespace: namespace, Revision: 1, IsInstall: true}
	vals, err := chartutil.ToRenderValues(chrt, overrides, opts, chartutil.DefaultCapabilities)
	if err != nil {
		return nil, "", fmt.Errorf("values: %w", err)
	}
	// Strict: a template that reads a value missing from values.yaml fails.
	files, err := engine.Engine{Strict: true}.Render(chrt, vals)
	if err != nil {
		return nil, "", fmt.Errorf("render: %w", err)
	}
	objs := &objects{}
	var notes string
	for name, content := range files {
		base := name[strings.LastIndex(name, "/")+1:]
		switch {
		case base == "NOTES.txt":
			notes = content
			continue
		case strings.HasPrefix(base, "_"):
			continue
		}
		for _, doc := range releaseutil.SplitManifests(content) {
			if strings.TrimSpace(doc) == "" {
				continue
			}
			obj, err := decodeManifest(doc)
			if err != nil {
				return nil, "", fmt.Errorf("%s: %w", name, err)
			}
			objs.add(obj)
		}
	}
	return objs, notes, nil
}

func TestChartLint(t *testing.T) {
	t.Parallel()
	tests := map[string]string{
		"defaults":      "",
		"all features":  allFeatures,
		"chart secrets": chartSecrets,
	}
	for name, values := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			linter := lint.AllWithKubeVersion(chartDir, parseValues(t, values), namespace, nil)
			for _, msg := range linter.Messages {
				// Like `helm lint --strict`: warnings fail, INFO (e.g. "icon is recommended") does not.
				if msg.Severity >= support.WarningSev {
					t.Errorf("helm lint: %v", msg)
				} else {
					t.Logf("helm lint: %v", msg)
				}
			}
		})
	}
}

func TestChartRender(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		values    string
		wantKinds []string
		check     func(t *testing.T, o *objects, notes string)
	}{
		{
			name:      "defaults",
			wantKinds: []string{"Deployment", "PodDisruptionBudget", "Secret", "Service", "ServiceAccount"},
			check: func(t *testing.T, o *objects, notes string) {
				d := o.deployments[0]
				if d.Spec.Replicas == nil || *d.Spec.Replicas != 2 {
					t.Errorf("replicas = %v, want 2", d.Spec.Replicas)
				}
				if got := *d.Spec.Template.Spec.TerminationGracePeriodSeconds; got != 60 {
					t.Errorf("terminationGracePeriodSeconds = %d, want 60", got)
				}
				c := d.Spec.Template.Spec.Containers[0]
				if c.Image != "ghcr.io/mergeguard/mergeguard:0.1.0" {
					t.Errorf("image = %q, want the chart's appVersion tag", c.Image)
				}
				if c.Lifecycle == nil || c.Lifecycle.PreStop == nil || c.Lifecycle.PreStop.Sleep == nil ||
					c.Lifecycle.PreStop.Sleep.Seconds != 5 {
					t.Errorf("preStop = %+v, want a 5s sleep", c.Lifecycle)
				}
				// The empty required secrets are reported to the operator.
				for _, v := range []string{"secrets.databaseURL", "secrets.githubAppWebhookSecret", "secrets.githubAppPrivateKey", "github.integrationID"} {
					if !strings.Contains(notes, "  - "+v+"\n") {
						t.Errorf("NOTES.txt does not warn about empty %s:\n%s", v, notes)
					}
				}
			},
		},
		{
			name:      "all features",
			values:    allFeatures,
			wantKinds: []string{"ConfigMap", "Deployment", "HorizontalPodAutoscaler", "Ingress", "Job", "NetworkPolicy", "PodDisruptionBudget", "Service", "ServiceMonitor"},
			check: func(t *testing.T, o *objects, notes string) {
				d := o.deployments[0]
				c := d.Spec.Template.Spec.Containers[0]
				wantEnv := map[string]string{
					"GOMEMLIMIT":                "966367641", // 90% of 1Gi
					"MERGEGUARD_PUBLIC_URL":     "https://mergeguard.example.com",
					"GITHUB_APP_INTEGRATION_ID": "1234567", // not 1.234567e+06
					"GITHUB_WEB_URL":            "https://github.example.com/",
					"GITHUB_V3_API_URL":         "https://github.example.com/api/v3/",
					"GITHUB_V4_API_URL":         "https://github.example.com/api/graphql",
					"OPENAI_BASE_URL":           "http://vllm.llm.svc:8000/v1",
					"MERGEGUARD_MODEL":          "qwen3-coder",
					"SSL_CERT_DIR":              "/etc/mergeguard/ca",
				}
				if diff := cmp.Diff(wantEnv, plainEnv(c, wantEnv)); diff != "" {
					t.Errorf("env (-want +got):\n%s", diff)
				}
				if !strings.HasSuffix(c.Image, "@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef") {
					t.Errorf("image = %q, want it pinned by digest", c.Image)
				}
				if got := d.Spec.Template.Spec.ServiceAccountName; got != "mergeguard-workload" {
					t.Errorf("serviceAccountName = %q, want mergeguard-workload", got)
				}
				var cfg map[string]any
				if err := yaml.Unmarshal([]byte(o.configMaps[0].Data["mergeguard.yml"]), &cfg); err != nil {
					t.Fatalf("mergeguard.yml in the ConfigMap: %v", err)
				}
				want := map[string]any{
					"workers": map[string]any{"concurrency": float64(4)},
					"llm":     map[string]any{"context_tokens": float64(32768)},
				}
				if diff := cmp.Diff(want, cfg); diff != "" {
					t.Errorf("mergeguard.yml (-want +got):\n%s", diff)
				}
				if !strings.Contains(notes, "https://mergeguard.example.com/api/github/hook") {
					t.Errorf("NOTES.txt does not show the webhook URL:\n%s", notes)
				}
				if strings.Contains(notes, "WARNING") {
					t.Errorf("NOTES.txt warns although an existing secret is used:\n%s", notes)
				}
				checkOperatorExtras(t, o)
			},
		},
		{
			name:      "chart secrets",
			values:    chartSecrets,
			wantKinds: []string{"Deployment", "PodDisruptionBudget", "Secret", "Service", "ServiceAccount"},
			check: func(t *testing.T, o *objects, notes string) {
				var keys []string
				for k := range o.secrets[0].StringData {
					keys = append(keys, k)
				}
				slices.Sort(keys)
				want := []string{"DATABASE_URL", "GITHUB_APP_PRIVATE_KEY", "GITHUB_APP_WEBHOOK_SECRET", "MERGEGUARD_API_TOKEN", "OPENAI_API_KEY"}
				if diff := cmp.Diff(want, keys); diff != "" {
					t.Errorf("secret keys (-want +got):\n%s", diff)
				}
				if got := o.secrets[0].StringData["GITHUB_APP_PRIVATE_KEY"]; !strings.HasPrefix(got, "-----BEGIN RSA PRIVATE KEY-----\nnot-a-real-key\n") {
					t.Errorf("private key lost its line breaks: %q", got)
				}
				if strings.Contains(notes, "WARNING") {
					t.Errorf("NOTES.txt warns although every secret is set:\n%s", notes)
				}
			},
		},
		{
			name:      "network policy with open egress",
			values:    "networkPolicy: {enabled: true}",
			wantKinds: []string{"Deployment", "NetworkPolicy", "PodDisruptionBudget", "Secret", "Service", "ServiceAccount"},
			check: func(t *testing.T, o *objects, _ string) {
				np := o.networkPolicies[0]
				want := []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}
				if diff := cmp.Diff(want, np.Spec.PolicyTypes); diff != "" {
					t.Errorf("policyTypes (-want +got):\n%s", diff)
				}
				if len(np.Spec.Ingress) != 1 || len(np.Spec.Ingress[0].From) != 0 {
					t.Errorf("ingress = %+v, want one rule open to every peer", np.Spec.Ingress)
				}
			},
		},
		{
			name:      "one replica has no disruption budget",
			values:    "replicaCount: 1",
			wantKinds: []string{"Deployment", "Secret", "Service", "ServiceAccount"},
		},
		{
			name:      "config, no preStop hook",
			values:    "config: {log: {level: debug}}\nlifecycle: {preStopSleepSeconds: 0}",
			wantKinds: []string{"ConfigMap", "Deployment", "PodDisruptionBudget", "Secret", "Service", "ServiceAccount"},
			check: func(t *testing.T, o *objects, _ string) {
				if l := o.deployments[0].Spec.Template.Spec.Containers[0].Lifecycle; l != nil {
					t.Errorf("lifecycle = %+v, want none", l)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			objs, notes, err := renderChart(parseValues(t, tt.values))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.wantKinds, objs.kinds()); diff != "" {
				t.Fatalf("rendered kinds (-want +got):\n%s", diff)
			}
			if err := checkInvariants(objs); err != nil {
				t.Errorf("invariants:\n%v", err)
			}
			if err := checkConfigMaps(objs); err != nil {
				t.Error(err)
			}
			if tt.check != nil {
				tt.check(t, objs, notes)
			}
		})
	}
}

// plainEnv returns the container's literal env values for the names in want.
func plainEnv(c corev1.Container, want map[string]string) map[string]string {
	got := map[string]string{}
	for _, e := range c.Env {
		if _, ok := want[e.Name]; ok && e.ValueFrom == nil {
			got[e.Name] = e.Value
		}
	}
	return got
}

// TestChartRejectsBadValues shows that values.schema.json turns typos and
// wrong types into errors instead of ignoring them.
func TestChartRejectsBadValues(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		values  string
		wantErr string
	}{
		"misspelt key":       {"replicas: 3", "additional properties 'replicas' not allowed"},
		"misspelt nested":    {"ingress: {enable: true}", "additional properties 'enable' not allowed"},
		"wrong service type": {"service: {type: Ingress}", "/service/type"},
		"string for integer": {`replicaCount: "2"`, "/replicaCount"},
		"bad digest":         {"image: {digest: latest}", "/image/digest"},
		"migration job without existing secret": {
			"migrationJob: {enabled: true}",
			"migrationJob.enabled needs secrets.existingSecret",
		},
		"bad scrape interval": {"serviceMonitor: {interval: 30}", "/serviceMonitor/interval"},
		"percent over 100":    {"goMemLimitPercent: 120", "/goMemLimitPercent"},
		"unparsable limit":    {"resources: {limits: {memory: 512MB}}", "cannot compute GOMEMLIMIT"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, _, err := renderChart(parseValues(t, tt.values))
			if err == nil {
				t.Fatalf("values %q rendered, want a schema error", tt.values)
			}
			if !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error = %v\nwant it to contain %q", err, tt.wantErr)
			}
		})
	}
}

// TestCheckInvariantsCatchesBrokenObjects shows that each invariant can fail:
// a correct rendering is broken in one place and must be reported.
func TestCheckInvariantsCatchesBrokenObjects(t *testing.T) {
	t.Parallel()
	objs, _, err := renderChart(nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := checkInvariants(objs); err != nil {
		t.Fatalf("defaults do not pass the invariants: %v", err)
	}
	pod := func(o *objects) *corev1.PodSpec { return &o.deployments[0].Spec.Template.Spec }
	tests := map[string]struct {
		breakIt func(o *objects)
		wantErr string
	}{
		"liveness path": {
			func(o *objects) { pod(o).Containers[0].LivenessProbe.HTTPGet.Path = "/health" },
			`liveness probe: path "/health", want "/healthz"`,
		},
		"readiness on liveness endpoint": {
			func(o *objects) { pod(o).Containers[0].ReadinessProbe.HTTPGet.Path = "/healthz" },
			`readiness probe: path "/healthz", want "/readyz"`,
		},
		"root user": {
			func(o *objects) { pod(o).SecurityContext.RunAsNonRoot = nil },
			"pod securityContext.runAsNonRoot is not true",
		},
		"writable root": {
			func(o *objects) { *pod(o).Containers[0].SecurityContext.ReadOnlyRootFilesystem = false },
			"readOnlyRootFilesystem is not true",
		},
		"no memory limit": {
			func(o *objects) { delete(pod(o).Containers[0].Resources.Limits, corev1.ResourceMemory) },
			"resources.limits.memory is not set",
		},
		"secret key missing": {
			func(o *objects) { delete(o.secrets[0].StringData, "GITHUB_APP_PRIVATE_KEY") },
			`env GITHUB_APP_PRIVATE_KEY: Secret "mg-mergeguard" has no key "GITHUB_APP_PRIVATE_KEY"`,
		},
		"required secret optional": {
			func(o *objects) {
				for i := range pod(o).Containers[0].Env {
					if ref := pod(o).Containers[0].Env[i].ValueFrom; ref != nil && ref.SecretKeyRef != nil {
						ref.SecretKeyRef.Optional = new(true)
					}
				}
			},
			"env DATABASE_URL: must be a required reference to a Secret",
		},
		"pdb selects nothing": {
			func(o *objects) { o.pdbs[0].Spec.Selector.MatchLabels["app.kubernetes.io/name"] = "other" },
			"PodDisruptionBudget selector",
		},
		"service selects nothing": {
			func(o *objects) { o.services[0].Spec.Selector["app.kubernetes.io/instance"] = "other" },
			"Service selector",
		},
		"config not mounted": {
			func(o *objects) {
				o.add(&corev1.ConfigMap{Data: map[string]string{"mergeguard.yml": ""}})
				o.configMaps[0].Name = "mg-mergeguard"
			},
			`ConfigMap "mg-mergeguard" is not mounted at /app/config`,
		},
		"service port": {
			func(o *objects) { o.services[0].Spec.Ports[0].TargetPort = intstr.FromString("web") },
			`Service targetPort "web" is not a container port`,
		},
		"addr and port disagree": {
			func(o *objects) { pod(o).Containers[0].Ports[0].ContainerPort = 9090 },
			`MERGEGUARD_ADDR ":8080" does not match container port 9090`,
		},
		"extra: service monitor path": {
			func(o *objects) { o.serviceMonitors[0].Spec.Endpoints[0].Path = "/" },
			"ServiceMonitor endpoint / on port",
		},
		"extra: network policy selects nothing": {
			func(o *objects) {
				o.networkPolicies[0].Spec.PodSelector.MatchLabels["app.kubernetes.io/name"] = "other"
			},
			"NetworkPolicy podSelector",
		},
		"extra: network policy port": {
			func(o *objects) { o.networkPolicies[0].Spec.Ingress[0].Ports[0].Port = new(intstr.FromInt32(22)) },
			"NetworkPolicy admits port 22",
		},
		"extra: service selects migration pods": {
			func(o *objects) { o.jobs[0].Spec.Template.Labels = o.deployments[0].Spec.Template.Labels },
			"the Service selects the migration Job's pods",
		},
		"extra: pods migrate beside the Job": {
			func(o *objects) {
				c := &pod(o).Containers[0]
				c.Env = slices.DeleteFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == "MERGEGUARD_MIGRATE" })
			},
			"has MERGEGUARD_MIGRATE true with 1 migration Jobs, want false",
		},
		"extra: migration args": {
			func(o *objects) { o.jobs[0].Spec.Template.Spec.Containers[0].Args = []string{"serve"} },
			"does not run migrate up",
		},
		"grace shorter than preStop": {
			func(o *objects) { *pod(o).TerminationGracePeriodSeconds = 5 },
			"terminationGracePeriodSeconds 5 leaves no time after the 5s preStop sleep",
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			// Cases named "extra: ..." break an object that only allFeatures renders.
			var values map[string]any
			if strings.HasPrefix(name, "extra: ") {
				values = parseValues(t, allFeatures)
			}
			broken, _, err := renderChart(values)
			if err != nil {
				t.Fatal(err)
			}
			tt.breakIt(broken)
			err = checkInvariants(broken)
			if err == nil {
				t.Fatal("checkInvariants accepted a broken rendering")
			}
			if !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("checkInvariants error:\n%v\nwant it to contain %q", err, tt.wantErr)
			}
		})
	}
}

// checkInvariants checks what must hold for any values: one Deployment
// reached by its Service, PDB and HPA; the probe endpoints of the contract;
// a non-root, read-only, capability-free container with resources; secret
// references that resolve; and Prometheus annotations that point at /metrics.
func checkInvariants(o *objects) error {
	if len(o.deployments) != 1 || len(o.services) != 1 {
		return fmt.Errorf("want one Deployment and one Service, got %d and %d", len(o.deployments), len(o.services))
	}
	var errs []error
	fail := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }

	d, svc := o.deployments[0], o.services[0]
	tmpl := d.Spec.Template
	pod := tmpl.Spec
	if !selects(d.Spec.Selector.MatchLabels, tmpl.Labels) {
		fail("Deployment selector %v does not select its pods %v", d.Spec.Selector.MatchLabels, tmpl.Labels)
	}
	if len(pod.Containers) != 1 {
		return fmt.Errorf("want one container, got %d", len(pod.Containers))
	}
	c := pod.Containers[0]
	if diff := cmp.Diff([]string{"serve"}, c.Args); diff != "" {
		fail("container args (-want +got):\n%s", diff)
	}

	// Ports: the app listens where the pod, the probes and the Service say.
	httpPort := containerPort(c, "http")
	if httpPort == 0 {
		fail("container has no port named http")
	}
	env := map[string]corev1.EnvVar{}
	for _, e := range c.Env {
		if _, dup := env[e.Name]; dup {
			fail("env %s is set twice", e.Name)
		}
		env[e.Name] = e
	}
	if addr := env["MERGEGUARD_ADDR"].Value; addr != fmt.Sprintf(":%d", httpPort) {
		fail("MERGEGUARD_ADDR %q does not match container port %d", addr, httpPort)
	}
	if !selects(svc.Spec.Selector, tmpl.Labels) {
		fail("Service selector %v does not select the pods %v", svc.Spec.Selector, tmpl.Labels)
	}
	for _, p := range svc.Spec.Ports {
		if p.TargetPort.Type != intstr.String || containerPort(c, p.TargetPort.StrVal) == 0 {
			fail("Service targetPort %q is not a container port", p.TargetPort.String())
		}
	}

	// Probes on the contract's endpoints.
	for _, p := range []struct {
		name  string
		probe *corev1.Probe
		path  string
	}{
		{"liveness", c.LivenessProbe, "/healthz"},
		{"readiness", c.ReadinessProbe, "/readyz"},
		{"startup", c.StartupProbe, "/healthz"},
	} {
		switch {
		case p.probe == nil || p.probe.HTTPGet == nil:
			fail("%s probe: want an HTTP GET on %s", p.name, p.path)
		case p.probe.HTTPGet.Path != p.path:
			fail("%s probe: path %q, want %q", p.name, p.probe.HTTPGet.Path, p.path)
		case p.probe.HTTPGet.Port.String() != "http":
			fail("%s probe: port %q, want the named port http", p.name, p.probe.HTTPGet.Port.String())
		}
	}

	// Security.
	if psc := pod.SecurityContext; psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot {
		fail("pod securityContext.runAsNonRoot is not true")
	} else if psc.RunAsUser != nil && *psc.RunAsUser == 0 {
		fail("pod securityContext.runAsUser is 0")
	}
	if sc := c.SecurityContext; sc == nil {
		fail("container has no securityContext")
	} else {
		if sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
			fail("container securityContext.readOnlyRootFilesystem is not true")
		}
		if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
			fail("container securityContext.allowPrivilegeEscalation is not false")
		}
		if sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(sc.Capabilities.Add) > 0 {
			fail("container capabilities %+v, want drop [ALL] and nothing added", sc.Capabilities)
		}
	}
	if pod.AutomountServiceAccountToken == nil || *pod.AutomountServiceAccountToken {
		fail("automountServiceAccountToken is not false")
	}
	if len(o.serviceAccounts) == 1 && o.serviceAccounts[0].Name != pod.ServiceAccountName {
		fail("pods run as %q, the chart creates ServiceAccount %q", pod.ServiceAccountName, o.serviceAccounts[0].Name)
	}

	// Resources.
	for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		if q, ok := c.Resources.Requests[r]; !ok || q.IsZero() {
			fail("resources.requests.%s is not set", r)
		}
	}
	if q, ok := c.Resources.Limits[corev1.ResourceMemory]; !ok || q.IsZero() {
		fail("resources.limits.memory is not set")
	}

	// Shutdown: the grace period covers the preStop sleep and leaves time to drain.
	if pod.TerminationGracePeriodSeconds == nil {
		fail("terminationGracePeriodSeconds is not set")
	} else if l := c.Lifecycle; l != nil && l.PreStop != nil && l.PreStop.Sleep != nil {
		if sleep := l.PreStop.Sleep.Seconds; *pod.TerminationGracePeriodSeconds <= sleep+10 {
			fail("terminationGracePeriodSeconds %d leaves no time after the %ds preStop sleep", *pod.TerminationGracePeriodSeconds, sleep)
		}
	}

	// Secrets: required variables come from non-optional references, and
	// every reference to a Secret the chart renders names one of its keys.
	rendered := map[string]*corev1.Secret{}
	for _, s := range o.secrets {
		rendered[s.Name] = s
	}
	// The app cannot start without these.
	for _, name := range []string{"DATABASE_URL", "GITHUB_APP_PRIVATE_KEY", "GITHUB_APP_WEBHOOK_SECRET"} {
		e := env[name]
		if e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil ||
			(e.ValueFrom.SecretKeyRef.Optional != nil && *e.ValueFrom.SecretKeyRef.Optional) {
			fail("env %s: must be a required reference to a Secret", name)
		}
	}
	for _, e := range c.Env {
		if e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil {
			continue
		}
		ref := e.ValueFrom.SecretKeyRef
		s, ok := rendered[ref.Name]
		if !ok {
			continue // an existing Secret, outside the chart
		}
		_, inData := s.Data[ref.Key]
		_, inStringData := s.StringData[ref.Key]
		if !inData && !inStringData && (ref.Optional == nil || !*ref.Optional) {
			fail("env %s: Secret %q has no key %q", e.Name, ref.Name, ref.Key)
		}
	}

	// The config file is mounted where the binary looks by default, from the
	// ConfigMap the chart renders.
	configVolume := map[string]string{} // volume name -> ConfigMap name
	for _, v := range pod.Volumes {
		if v.ConfigMap != nil {
			configVolume[v.Name] = v.ConfigMap.Name
		}
	}
	mounted := map[string]bool{} // ConfigMap names mounted at /app/config
	for _, m := range c.VolumeMounts {
		if m.MountPath != "/app/config" {
			continue
		}
		cm, ok := configVolume[m.Name]
		if !ok || !slices.ContainsFunc(o.configMaps, func(c *corev1.ConfigMap) bool { return c.Name == cm }) {
			fail("volume %s at /app/config is not the chart's ConfigMap", m.Name)
		}
		mounted[cm] = true
	}
	for _, cm := range o.configMaps {
		if _, ok := cm.Data["mergeguard.yml"]; !ok {
			fail("ConfigMap %q has no mergeguard.yml", cm.Name)
		}
		if !mounted[cm.Name] {
			fail("ConfigMap %q is not mounted at /app/config", cm.Name)
		}
	}

	// Prometheus scraping points at /metrics on the app's port.
	if tmpl.Annotations["prometheus.io/scrape"] == "true" {
		if got := tmpl.Annotations["prometheus.io/path"]; got != "/metrics" {
			fail("prometheus.io/path %q, want /metrics", got)
		}
		if got := tmpl.Annotations["prometheus.io/port"]; got != fmt.Sprint(httpPort) {
			fail("prometheus.io/port %q, want %d", got, httpPort)
		}
	}

	// Replicas: PDB and HPA target these pods and leave room for evictions.
	minReplicas := int32(1)
	if d.Spec.Replicas != nil {
		minReplicas = *d.Spec.Replicas
	}
	for _, h := range o.hpas {
		if d.Spec.Replicas != nil {
			fail("Deployment sets replicas although a HorizontalPodAutoscaler manages them")
		}
		if ref := h.Spec.ScaleTargetRef; ref.Kind != "Deployment" || ref.APIVersion != "apps/v1" || ref.Name != d.Name {
			fail("HorizontalPodAutoscaler targets %s %s, want Deployment %s", ref.APIVersion, ref.Kind, d.Name)
		}
		if h.Spec.MinReplicas == nil || *h.Spec.MinReplicas > h.Spec.MaxReplicas {
			fail("HorizontalPodAutoscaler minReplicas %v > maxReplicas %d", h.Spec.MinReplicas, h.Spec.MaxReplicas)
		} else {
			minReplicas = *h.Spec.MinReplicas
		}
	}
	for _, p := range o.pdbs {
		if p.Spec.Selector == nil || len(p.Spec.Selector.MatchExpressions) > 0 || !selects(p.Spec.Selector.MatchLabels, tmpl.Labels) {
			fail("PodDisruptionBudget selector %v does not select the pods %v", p.Spec.Selector, tmpl.Labels)
		}
		if p.Spec.MinAvailable == nil || p.Spec.MinAvailable.Type != intstr.Int || p.Spec.MinAvailable.IntVal >= minReplicas {
			fail("PodDisruptionBudget minAvailable %v blocks every eviction with %d replicas", p.Spec.MinAvailable, minReplicas)
		}
	}
	if len(o.pdbs) == 0 && minReplicas > 1 {
		fail("%d replicas and no PodDisruptionBudget", minReplicas)
	}

	// Ingress routes reach the Service's named port.
	for _, ing := range o.ingresses {
		for _, rule := range ing.Spec.Rules {
			for _, p := range rule.HTTP.Paths {
				b := p.Backend.Service
				if b == nil || b.Name != svc.Name || !slices.ContainsFunc(svc.Spec.Ports, func(sp corev1.ServicePort) bool { return sp.Name == b.Port.Name }) {
					fail("Ingress path %s on %s does not reach Service %s", p.Path, rule.Host, svc.Name)
				}
			}
		}
	}

	errs = append(errs, checkExtras(o, tmpl.Labels, httpPort)...)

	// Every object is labelled for its release and leaves the namespace to Helm.
	for _, m := range o.all {
		if m.GetNamespace() != "" {
			fail("%s sets a namespace", m.GetName())
		}
		if m.GetLabels()["app.kubernetes.io/instance"] != release {
			fail("%s lacks the app.kubernetes.io/instance label", m.GetName())
		}
	}
	return errors.Join(errs...)
}

// selects reports whether a non-empty label selector matches labels.
func selects(selector, labels map[string]string) bool {
	if len(selector) == 0 {
		return false
	}
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// containerPort returns the number of the container's port with that name, or 0.
func containerPort(c corev1.Container, name string) int32 {
	for _, p := range c.Ports {
		if p.Name == name {
			return p.ContainerPort
		}
	}
	return 0
}

// checkOperatorExtras checks the ServiceMonitor, NetworkPolicy and migration
// Job of the allFeatures rendering.
func checkOperatorExtras(t *testing.T, o *objects) {
	t.Helper()
	sm := o.serviceMonitors[0]
	if got := sm.Labels["release"]; got != "kube-prometheus-stack" {
		t.Errorf("ServiceMonitor label release = %q, want kube-prometheus-stack", got)
	}
	if ep := sm.Spec.Endpoints[0]; ep.Interval != "30s" || ep.ScrapeTimeout != "10s" {
		t.Errorf("ServiceMonitor endpoint = %+v, want interval 30s and scrapeTimeout 10s", ep)
	}
	np := o.networkPolicies[0]
	wantTypes := []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress}
	if diff := cmp.Diff(wantTypes, np.Spec.PolicyTypes); diff != "" {
		t.Errorf("NetworkPolicy policyTypes (-want +got):\n%s", diff)
	}
	if got := len(np.Spec.Egress); got != 2 {
		t.Errorf("NetworkPolicy has %d egress rules, want 2", got)
	}
	if from := np.Spec.Ingress[0].From; len(from) != 1 || from[0].NamespaceSelector == nil {
		t.Errorf("NetworkPolicy ingress from = %+v, want the ingress controller's namespace", from)
	}
	job := o.jobs[0]
	if got := job.Annotations["helm.sh/hook"]; got != "pre-install,pre-upgrade" {
		t.Errorf("Job hook = %q, want pre-install,pre-upgrade", got)
	}
	if got := job.Spec.Template.Spec.ServiceAccountName; got != "mergeguard-workload" {
		t.Errorf("Job serviceAccountName = %q, want the existing mergeguard-workload", got)
	}
}

// TestChartGoMemLimit shows GOMEMLIMIT at goMemLimitPercent of the memory
// limit, in bytes, for the quantity forms Kubernetes users write.
func TestChartGoMemLimit(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		values string
		want   string // empty: GOMEMLIMIT unset
	}{
		{"default 512Mi", "", "483183820"},
		{"Gi", "resources: {limits: {memory: 2Gi}}", "1932735283"},
		{"decimal", "resources: {limits: {memory: 1.5Gi}}", "1449551462"},
		{"SI", "resources: {limits: {memory: 500M}}", "450000000"},
		{"bytes", "resources: {limits: {memory: 1000000}}", "900000"},
		{"other percent", "goMemLimitPercent: 80", "429496729"},
		{"percent 0", "goMemLimitPercent: 0", ""},
		{"no limit", "resources: {limits: null}", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			objs, _, err := renderChart(parseValues(t, tt.values))
			if err != nil {
				t.Fatal(err)
			}
			got := ""
			for _, e := range objs.deployments[0].Spec.Template.Spec.Containers[0].Env {
				if e.Name == "GOMEMLIMIT" {
					got = e.Value
				}
			}
			if got != tt.want {
				t.Errorf("GOMEMLIMIT = %q, want %q", got, tt.want)
			}
		})
	}
}

// checkExtras checks the optional ServiceMonitor, NetworkPolicy and migration
// Job: the first two reach the pods' HTTP port and /metrics; the Job runs
// `migrate up` as a pre-install and pre-upgrade hook, from pods that no
// Service, PodDisruptionBudget or NetworkPolicy of the chart selects.
func checkExtras(o *objects, podLabels map[string]string, httpPort int32) []error {
	var errs []error
	fail := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	svc := o.services[0]
	for _, sm := range o.serviceMonitors {
		if len(sm.Spec.Selector.MatchExpressions) > 0 || !selects(sm.Spec.Selector.MatchLabels, svc.Labels) {
			fail("ServiceMonitor selector %v does not select the Service %v", sm.Spec.Selector, svc.Labels)
		}
		for _, ep := range sm.Spec.Endpoints {
			if ep.Path != "/metrics" || !slices.ContainsFunc(svc.Spec.Ports, func(p corev1.ServicePort) bool { return p.Name == ep.Port }) {
				fail("ServiceMonitor endpoint %s on port %q, want /metrics on a Service port", ep.Path, ep.Port)
			}
		}
	}
	for _, np := range o.networkPolicies {
		if len(np.Spec.PodSelector.MatchExpressions) > 0 || !selects(np.Spec.PodSelector.MatchLabels, podLabels) {
			fail("NetworkPolicy podSelector %v does not select the pods %v", np.Spec.PodSelector, podLabels)
		}
		for _, rule := range np.Spec.Ingress {
			for _, p := range rule.Ports {
				if p.Port == nil || (p.Port.String() != "http" && p.Port.String() != fmt.Sprint(httpPort)) {
					fail("NetworkPolicy admits port %v, want only the HTTP port", p.Port)
				}
			}
		}
	}
	for _, job := range o.jobs {
		hook := job.Annotations["helm.sh/hook"]
		if !strings.Contains(hook, "pre-install") || !strings.Contains(hook, "pre-upgrade") {
			fail("Job %s hook %q, want pre-install and pre-upgrade", job.Name, hook)
		}
		jobPod := job.Spec.Template
		if selects(svc.Spec.Selector, jobPod.Labels) {
			fail("the Service selects the migration Job's pods")
		}
		if len(jobPod.Spec.Containers) != 1 || !slices.Equal(jobPod.Spec.Containers[0].Args, []string{"migrate", "up"}) {
			fail("Job %s does not run migrate up", job.Name)
		}
		if jobPod.Spec.RestartPolicy != corev1.RestartPolicyNever {
			fail("Job %s restartPolicy %q, want Never", job.Name, jobPod.Spec.RestartPolicy)
		}
	}
	// The pods migrate at start unless the Job does it for them; then
	// they must not (MERGEGUARD_MIGRATE=false: they check the schema).
	wantMigrate := "true"
	if len(o.jobs) > 0 {
		wantMigrate = "false"
	}
	for _, d := range o.deployments {
		for _, c := range d.Spec.Template.Spec.Containers {
			got := "true" // the binary's default
			for _, e := range c.Env {
				if e.Name == "MERGEGUARD_MIGRATE" {
					got = e.Value
				}
			}
			if got != wantMigrate {
				fail("container %s has MERGEGUARD_MIGRATE %s with %d migration Jobs, want %s", c.Name, got, len(o.jobs), wantMigrate)
			}
		}
	}
	return errs
}
