package config_test

import (
	"fmt"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mergeguard/mergeguard/config"
)

// docPath is the configuration reference these tests keep honest.
const docPath = "../docs/configuration.md"

// docKey is one YAML key of a configuration struct.
type docKey struct {
	// path is the key as the reference writes it: "auto_review.drafts",
	// "path_instructions[].path", "llm.prices.<name>.input_per_million".
	path string
	// def is the key's default, invalid under a list or a map (no default).
	def reflect.Value
}

// yamlKeys lists the keys of the struct value v by their yaml tags, depth
// first, each parent before its children. Values of a type for which leaf
// reports true are listed without their children.
func yamlKeys(v reflect.Value, t reflect.Type, prefix string, leaf func(reflect.Type) bool) []docKey {
	var keys []docKey
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if !f.IsExported() || name == "" || name == "-" {
			continue
		}
		k := docKey{path: prefix + name}
		var fv reflect.Value
		if v.IsValid() {
			fv = v.Field(i)
			k.def = fv
		}
		keys = append(keys, k)
		ft := f.Type
		switch {
		case leaf != nil && leaf(ft):
		case ft.Kind() == reflect.Struct:
			keys = append(keys, yamlKeys(fv, ft, k.path+".", leaf)...)
		case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct:
			keys = append(keys, yamlKeys(reflect.Value{}, ft.Elem(), k.path+"[].", leaf)...)
		case ft.Kind() == reflect.Map && ft.Elem().Kind() == reflect.Struct:
			keys = append(keys, yamlKeys(reflect.Value{}, ft.Elem(), k.path+".<name>.", leaf)...)
		}
	}
	return keys
}

// repoKeys are the keys of .mergeguard.yml with their defaults.
func repoKeys() []docKey {
	return yamlKeys(reflect.ValueOf(config.DefaultRepo()), reflect.TypeFor[config.Repo](), "", nil)
}

// appKeys are the keys of the application configuration with their
// defaults; its review section is one key (the .mergeguard.yml keys).
func appKeys() []docKey {
	isRepo := func(t reflect.Type) bool { return t == reflect.TypeFor[config.Repo]() }
	return yamlKeys(reflect.ValueOf(config.Default()), reflect.TypeFor[config.Config](), "", isRepo)
}

// row returns the cells of the reference's table row for key, without
// the key itself, or nil when there is none.
func row(doc, key string) []string {
	for line := range strings.Lines(doc) {
		if rest, ok := strings.CutPrefix(line, "| `"+key+"` |"); ok {
			cells := strings.Split(strings.TrimSpace(rest), "|")
			for i := range cells {
				cells[i] = strings.TrimSpace(cells[i])
			}
			return cells
		}
	}
	return nil
}

// wantDefault formats a default as the reference's default column writes
// it, and reports whether the column is checked for v's type (mappings and
// lists of mappings are described in words).
func wantDefault(v reflect.Value) (string, bool) {
	switch v.Kind() {
	case reflect.String:
		if v.String() == "" {
			return "`\"\"`", true
		}
		return "`" + v.String() + "`", true
	case reflect.Bool, reflect.Float64:
		return fmt.Sprintf("`%v`", v.Interface()), true
	case reflect.Int, reflect.Int64:
		if d, ok := v.Interface().(time.Duration); ok {
			return "`" + d.String() + "`", true
		}
		return "`" + strconv.FormatInt(v.Int(), 10) + "`", true
	case reflect.Slice:
		if v.Type().Elem().Kind() != reflect.String {
			return "", false
		}
		quoted := make([]string, v.Len())
		for i := range v.Len() {
			quoted[i] = strconv.Quote(v.Index(i).String())
		}
		return "`[" + strings.Join(quoted, ", ") + "]`", true
	}
	return "", false
}

// sameDefault reports whether the reference's default cell says want;
// durations may be written in any unit ("120s" for 2m0s).
func sameDefault(cell, want string, v reflect.Value) bool {
	if d, ok := v.Interface().(time.Duration); ok {
		got, err := time.ParseDuration(strings.Trim(cell, "`"))
		return err == nil && got == d
	}
	return cell == want
}

// undocumented lists what the reference fails to document: keys of
// .mergeguard.yml and of the application configuration without a table
// row, rows whose default is not the code's, and environment variables
// without a row naming the variable and its key.
func undocumented(doc string) []string {
	var problems []string
	check := func(what string, keys []docKey) {
		for _, k := range keys {
			cells := row(doc, k.path)
			if cells == nil {
				problems = append(problems, fmt.Sprintf("%s key %s: no table row", what, k.path))
				continue
			}
			if !k.def.IsValid() {
				continue
			}
			want, checked := wantDefault(k.def)
			if checked && (len(cells) < 2 || !sameDefault(cells[1], want, k.def)) {
				problems = append(problems, fmt.Sprintf("%s key %s: default column does not say %s", what, k.path, want))
			}
		}
	}
	check(".mergeguard.yml", repoKeys())
	check("application", appKeys())
	for _, v := range config.EnvVars() {
		found := false
		for line := range strings.Lines(doc) {
			if strings.HasPrefix(line, "| `"+v.Name+"` |") && strings.Contains(line, "`"+v.Key+"`") {
				found = true
				break
			}
		}
		if !found {
			problems = append(problems, fmt.Sprintf("environment variable %s: no table row naming it and its key %s", v.Name, v.Key))
		}
	}
	return problems
}

func readDoc(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(docPath)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestConfigurationReference fails when docs/configuration.md misses a key
// of .mergeguard.yml or of the application configuration, states a wrong
// default, or misses an environment variable.
func TestConfigurationReference(t *testing.T) {
	if problems := undocumented(readDoc(t)); len(problems) > 0 {
		t.Errorf("%s is out of date with the code:\n%s", docPath, strings.Join(problems, "\n"))
	}
}

// TestConfigurationReferenceCheck shows that the check above catches a
// missing key, a wrong default and a missing variable.
func TestConfigurationReferenceCheck(t *testing.T) {
	doc := readDoc(t)
	tests := []struct {
		name      string
		old, new  string
		wantFound string
	}{
		{
			name: "repo key removed",
			old:  "| `auto_review.skip_labels` |", new: "| `auto_review.skip_label` |",
			wantFound: ".mergeguard.yml key auto_review.skip_labels: no table row",
		},
		{
			name: "list item key removed",
			old:  "| `path_instructions[].path` |", new: "| `path_instructions.path` |",
			wantFound: ".mergeguard.yml key path_instructions[].path: no table row",
		},
		{
			name: "wrong repo default",
			old:  "| `max_files` | integer ≥ 0 | `300` |", new: "| `max_files` | integer ≥ 0 | `500` |",
			wantFound: ".mergeguard.yml key max_files: default column does not say `300`",
		},
		{
			name: "wrong list default",
			old:  "`[\"WIP\", \"[skip review]\", \"DO NOT MERGE\"]` |", new: "`[\"WIP\"]` |",
			wantFound: `.mergeguard.yml key auto_review.ignore_title_keywords: default column does not say ` +
				"`[\"WIP\", \"[skip review]\", \"DO NOT MERGE\"]`",
		},
		{
			name: "app key removed",
			old:  "| `llm.prices.<name>.output_per_million` |", new: "| `llm.prices.output_per_million` |",
			wantFound: "application key llm.prices.<name>.output_per_million: no table row",
		},
		{
			name: "wrong duration default",
			old:  "| `workers.lease` | duration | `2m` |", new: "| `workers.lease` | duration | `90s` |",
			wantFound: "application key workers.lease: default column does not say `2m0s`",
		},
		{
			name: "variable removed",
			old:  "\n| `MERGEGUARD_WORKERS` |", new: "\n| `MERGEGUARD_WORKER` |",
			wantFound: "environment variable MERGEGUARD_WORKERS: no table row naming it and its key workers.concurrency",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !strings.Contains(doc, tt.old) {
				t.Fatalf("%s no longer contains %q; update this test", docPath, tt.old)
			}
			got := undocumented(strings.Replace(doc, tt.old, tt.new, 1))
			if diff := cmp.Diff([]string{tt.wantFound}, got); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

// exampleYAML returns the YAML block under the reference's heading
// "Example `.mergeguard.yml`".
func exampleYAML(doc string) (string, error) {
	_, rest, ok := strings.Cut(doc, "### Example `.mergeguard.yml`")
	if !ok {
		return "", fmt.Errorf("no example heading")
	}
	_, rest, ok = strings.Cut(rest, "```yaml\n")
	if !ok {
		return "", fmt.Errorf("no yaml block after the example heading")
	}
	block, _, ok := strings.Cut(rest, "```")
	if !ok {
		return "", fmt.Errorf("unterminated yaml block")
	}
	return block, nil
}

// TestConfigurationReferenceExample checks that the reference's example
// .mergeguard.yml is valid and sets what its comments say.
func TestConfigurationReferenceExample(t *testing.T) {
	block, err := exampleYAML(readDoc(t))
	if err != nil {
		t.Fatalf("%s: %v", docPath, err)
	}
	repo, err := config.ParseRepo([]byte(block))
	if err != nil {
		t.Fatalf("the example .mergeguard.yml of %s is invalid:\n%v", docPath, err)
	}
	reviewable := map[string]bool{
		"cmd/mergeguard/main.go":   true,
		"internal/auth/token.go":   true,
		"migrations/0001_init.sql": true,
		"internal/mocks/store.go":  false,
		"README.md":                false,
	}
	for file, want := range reviewable {
		if got := repo.Reviewable(file); got != want {
			t.Errorf("example path_filters: Reviewable(%q) = %v, want %v", file, got, want)
		}
	}
}
