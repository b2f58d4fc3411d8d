package validate

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// appEnvVars returns the environment variables the application reads, taken
// from the EnvVars function in config/load.go: the first field of each entry,
// a string literal or a string constant of that file.
func appEnvVars() ([]string, error) {
	const path = repoRoot + "/config/load.go"
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, path, nil, 0)
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", path, err)
	}
	consts := map[string]string{}
	var list *ast.CompositeLit
	ast.Inspect(file, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.ValueSpec:
			for i, name := range n.Names {
				if i < len(n.Values) {
					if lit, ok := n.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
						consts[name.Name], _ = strconv.Unquote(lit.Value)
					}
				}
			}
		case *ast.FuncDecl:
			if n.Name.Name != "EnvVars" {
				return false
			}
			ast.Inspect(n.Body, func(m ast.Node) bool {
				if cl, ok := m.(*ast.CompositeLit); ok && list == nil {
					list = cl
					return false
				}
				return true
			})
		}
		return true
	})
	if list == nil {
		return nil, fmt.Errorf("%s: no EnvVars list found", path)
	}
	var names []string
	for _, elt := range list.Elts {
		entry, ok := elt.(*ast.CompositeLit)
		if !ok || len(entry.Elts) == 0 {
			return nil, fmt.Errorf("%s: unexpected EnvVars entry at %s", path, fset.Position(elt.Pos()))
		}
		switch first := entry.Elts[0].(type) {
		case *ast.BasicLit:
			name, err := strconv.Unquote(first.Value)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", fset.Position(first.Pos()), err)
			}
			names = append(names, name)
		case *ast.Ident:
			name, ok := consts[first.Name]
			if !ok {
				return nil, fmt.Errorf("%s: constant %s not found", path, first.Name)
			}
			names = append(names, name)
		default:
			return nil, fmt.Errorf("%s: unexpected variable name at %s", path, fset.Position(first.Pos()))
		}
	}
	return names, nil
}

// TestOperatorGuideListsEveryVariable keeps the guide's table in step with the
// variables the code reads, and with the contract's.
func TestOperatorGuideListsEveryVariable(t *testing.T) {
	t.Parallel()
	names, err := appEnvVars()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range contractEnv() {
		if !slices.Contains(names, name) {
			t.Errorf("config/load.go does not read %s, a variable of the contract", name)
		}
	}
	guide, err := os.ReadFile("../../docs/operator-guide.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		if !strings.Contains(string(guide), "| `"+name+"` |") {
			t.Errorf("docs/operator-guide.md has no table row for %s", name)
		}
	}
	if len(names) < len(contractEnv()) {
		t.Fatalf("found only %d variables in config/load.go: %v", len(names), names)
	}
}

// TestEnvExampleDocumentsContract checks that .env.example names every
// variable of the contract, set or commented out.
func TestEnvExampleDocumentsContract(t *testing.T) {
	t.Parallel()
	example, err := os.ReadFile("../.env.example")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range contractEnv() {
		// docker-compose.yml fixes MERGEGUARD_ADDR to the container's port.
		if name != "MERGEGUARD_ADDR" && !regexp.MustCompile(`(?m)^#? ?`+name+`=`).Match(example) {
			t.Errorf(".env.example does not document %s", name)
		}
	}
}

// exampleConfig returns config/mergeguard.example.yml, which lists every key
// of the app config.
func exampleConfig() (map[string]any, error) {
	data, err := os.ReadFile(repoRoot + "/config/mergeguard.example.yml")
	if err != nil {
		return nil, err
	}
	var example map[string]any
	if err := yaml.Unmarshal(data, &example); err != nil {
		return nil, fmt.Errorf("parse config/mergeguard.example.yml: %w", err)
	}
	return example, nil
}

// checkAppConfig reports every key of cfg, an app config file's content, that
// config/mergeguard.example.yml does not have: the app stops on unknown keys.
// Values are the app's to validate.
func checkAppConfig(cfg map[string]any) error {
	example, err := exampleConfig()
	if err != nil {
		return err
	}
	// Maps whose keys are names the operator chooses.
	freeForm := map[string]bool{"llm.prices": true}
	var errs []error
	var walk func(path string, got, want any)
	walk = func(path string, got, want any) {
		gm, gok := got.(map[string]any)
		wm, wok := want.(map[string]any)
		if !gok || !wok || freeForm[path] {
			return
		}
		for k, v := range gm {
			key := strings.TrimPrefix(path+"."+k, ".")
			w, ok := wm[k]
			if !ok {
				errs = append(errs, fmt.Errorf("config key %s is not in config/mergeguard.example.yml", key))
				continue
			}
			walk(key, v, w)
		}
	}
	walk("", cfg, example)
	return errors.Join(errs...)
}

// checkConfigMaps checks the app config the chart renders into ConfigMaps.
func checkConfigMaps(o *objects) error {
	var errs []error
	for _, cm := range o.configMaps {
		var cfg map[string]any
		if err := yaml.Unmarshal([]byte(cm.Data["mergeguard.yml"]), &cfg); err != nil {
			errs = append(errs, fmt.Errorf("ConfigMap %s: mergeguard.yml: %w", cm.Name, err))
			continue
		}
		if err := checkAppConfig(cfg); err != nil {
			errs = append(errs, fmt.Errorf("ConfigMap %s: %w", cm.Name, err))
		}
	}
	return errors.Join(errs...)
}

func TestCheckAppConfig(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		cfg     string
		wantErr string
	}{
		"known keys":      {"server: {shutdown_timeout: 10s}\nllm: {context_tokens: 8192, prices: {qwen: {input_per_million: 0}}}", ""},
		"unknown section": {"logging: {level: debug}", "config key logging is not in"},
		"unknown key":     {"workers: {concurency: 4}", "config key workers.concurency is not in"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var cfg map[string]any
			if err := yaml.Unmarshal([]byte(tt.cfg), &cfg); err != nil {
				t.Fatal(err)
			}
			err := checkAppConfig(cfg)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("checkAppConfig: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("checkAppConfig error = %v, want it to contain %q", err, tt.wantErr)
			}
		})
	}
}

// TestOperatorGuideYAML checks every YAML example of the operator guide by
// what its first line says it is: an app config file, Helm values (rendered
// with the chart) or a Kubernetes manifest (decoded strictly).
func TestOperatorGuideYAML(t *testing.T) {
	t.Parallel()
	guide, err := os.ReadFile("../../docs/operator-guide.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?ms)^( *)```yaml\n(.*?)^ *```").FindAllStringSubmatch(string(guide), -1)
	if len(blocks) == 0 {
		t.Fatal("no YAML blocks found")
	}
	for i, b := range blocks {
		indent, text := b[1], b[2]
		lines := strings.Split(text, "\n")
		for j, l := range lines {
			lines[j] = strings.TrimPrefix(l, indent)
		}
		text = strings.Join(lines, "\n")
		kind, _, _ := strings.Cut(text, "\n")
		t.Run(fmt.Sprintf("%d %s", i, kind), func(t *testing.T) {
			t.Parallel()
			switch kind {
			case "# config/mergeguard.yml":
				var cfg map[string]any
				if err := yaml.UnmarshalStrict([]byte(text), &cfg); err != nil {
					t.Fatal(err)
				}
				if err := checkAppConfig(cfg); err != nil {
					t.Error(err)
				}
			case "# values-prod.yaml", "# Helm values":
				objs, _, err := renderChart(parseValues(t, text))
				if err != nil {
					t.Fatal(err)
				}
				if err := errors.Join(checkInvariants(objs), checkConfigMaps(objs)); err != nil {
					t.Error(err)
				}
			case "# keda-scaledobject.yaml":
				if err := checkScaledObject(text); err != nil {
					t.Error(err)
				}
			case "# migrate-down.yaml":
				if _, err := decodeManifest(text); err != nil {
					t.Fatal(err)
				}
			default:
				t.Errorf("YAML block starting %q: say what it is on its first line so it can be checked", kind)
			}
		})
	}
}

// scaledObject is the part of KEDA's ScaledObject (keda.sh/v1alpha1) the
// operator guide's example uses; strict decoding rejects any other field.
type scaledObject struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Metadata   map[string]string `json:"metadata"`
	Spec       struct {
		ScaleTargetRef struct {
			Name string `json:"name"`
		} `json:"scaleTargetRef"`
		MinReplicaCount int `json:"minReplicaCount"`
		MaxReplicaCount int `json:"maxReplicaCount"`
		CooldownPeriod  int `json:"cooldownPeriod"`
		Triggers        []struct {
			Type     string            `json:"type"`
			Metadata map[string]string `json:"metadata"`
		} `json:"triggers"`
	} `json:"spec"`
}

// checkScaledObject checks the guide's KEDA example: it scales the chart's
// Deployment (release "mergeguard") on the queued reviews with the Prometheus
// scaler, and keeps at least two replicas.
func checkScaledObject(text string) error {
	var so scaledObject
	if err := yaml.UnmarshalStrict([]byte(text), &so); err != nil {
		return fmt.Errorf("ScaledObject: %w", err)
	}
	objs, _, err := renderChartAs("mergeguard", nil)
	if err != nil {
		return err
	}
	var errs []error
	if so.APIVersion != "keda.sh/v1alpha1" || so.Kind != "ScaledObject" {
		errs = append(errs, fmt.Errorf("apiVersion %q kind %q, want keda.sh/v1alpha1 ScaledObject", so.APIVersion, so.Kind))
	}
	if want := objs.deployments[0].Name; so.Spec.ScaleTargetRef.Name != want {
		errs = append(errs, fmt.Errorf("scaleTargetRef.name %q, want the chart's Deployment %q", so.Spec.ScaleTargetRef.Name, want))
	}
	if so.Spec.MinReplicaCount < 2 || so.Spec.MaxReplicaCount < so.Spec.MinReplicaCount {
		errs = append(errs, fmt.Errorf("replicas %d..%d, want at least 2", so.Spec.MinReplicaCount, so.Spec.MaxReplicaCount))
	}
	if len(so.Spec.Triggers) != 1 || so.Spec.Triggers[0].Type != "prometheus" ||
		!strings.HasPrefix(so.Spec.Triggers[0].Metadata["query"], `max(mergeguard_queue_depth{state="queued"`) ||
		so.Spec.Triggers[0].Metadata["threshold"] == "" || so.Spec.Triggers[0].Metadata["serverAddress"] == "" {
		errs = append(errs, fmt.Errorf("triggers %+v, want one prometheus trigger on max(mergeguard_queue_depth{state=\"queued\"}) with a threshold", so.Spec.Triggers))
	}
	return errors.Join(errs...)
}
