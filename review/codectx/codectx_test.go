package codectx

import (
	"context"
	"fmt"
	"maps"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mergeguard/mergeguard/review"
)

// merged is base with head's files over it: the repository at head.
func merged(base, head repo) repo {
	out := repo{}
	maps.Copy(out, base)
	maps.Copy(out, head)
	return out
}

// brief lists snippets as "kind path:start-end name".
func brief(ss []Snippet) []string {
	var out []string
	for _, s := range ss {
		out = append(out, fmt.Sprintf("%s %s:%d-%d %s", s.Kind, s.Path, s.Start, s.End, s.Name))
	}
	return out
}

func TestCollect(t *testing.T) {
	if !Available {
		t.Skip("no parser without cgo")
	}
	tests := []struct {
		name       string
		base, head repo
		file       string // the changed file whose snippets are checked
		want       []string
	}{
		{
			name: "go: definition with its doc comment, used by a new caller",
			base: repo{
				"store/users.go":     "package store\n\n// User is an account.\ntype User struct{ Email string }\n\n// ByID returns the user, or nil when there is none.\nfunc (s *Store) ByID(id int) (*User, error) {\n\treturn nil, nil\n}\n",
				"billing/invoice.go": "package billing\n\nfunc Owner(s *store.Store, id int) string {\n\treturn \"\"\n}\n",
			},
			head: repo{
				"billing/invoice.go": "package billing\n\nfunc Owner(s *store.Store, id int) string {\n\tu, err := s.ByID(id)\n\tif err != nil {\n\t\treturn \"\"\n\t}\n\treturn u.Email\n}\n",
			},
			file: "billing/invoice.go",
			want: []string{"definition store/users.go:6-9 ByID"},
		},
		{
			name: "go: call site of a changed function in another package",
			base: repo{
				"config/config.go": "package config\n\n// Timeout is in seconds.\nfunc Timeout() int {\n\treturn 5\n}\n",
				"proxy/client.go":  "package proxy\n\n// New builds the client.\nfunc New() time.Duration {\n\treturn time.Duration(config.Timeout()) * time.Second\n}\n",
			},
			head: repo{"config/config.go": "package config\n\n// Timeout is in milliseconds.\nfunc Timeout() int {\n\treturn 5000\n}\n"},
			file: "config/config.go",
			want: []string{"call site proxy/client.go:3-6 Timeout"},
		},
		{
			name: "go: enclosing function far from the hunk",
			base: repo{"m/m.go": "package m\n\nfunc F(m map[string]int) {\n\tmu.Lock()\n\tdefer mu.Unlock()\n\ta := 1\n\tb := 2\n\tc := 3\n\td := 4\n\te := 5\n\tf := 6\n\tg := 7\n\tm[\"x\"] = a + b + c + d + e + f + g\n}\n"},
			head: repo{"m/m.go": "package m\n\nfunc F(m map[string]int) {\n\tmu.Lock()\n\tdefer mu.Unlock()\n\ta := 1\n\tb := 2\n\tc := 3\n\td := 4\n\te := 5\n\tf := 6\n\tg := 7\n\tm[\"y\"] = a + b + c + d + e + f + g\n}\n"},
			file: "m/m.go",
			want: []string{"enclosing m/m.go:3-14 F"},
		},
		{
			name: "python: method definition with its docstring; a stale positional caller",
			base: repo{
				"bank/accounts.py":    "class AccountRepo:\n    def __init__(self, db):\n        self.db = db\n\n    def find(self, account_id):\n        \"\"\"Return the account, or None.\"\"\"\n        return None\n",
				"bank/api.py":         "def show(repo, i):\n    return repo.find(i)\n",
				"mail/sender.py":      "def send_email(to, subject, body):\n    pass\n",
				"accounts/welcome.py": "from mail.sender import send_email\n\n\ndef welcome(user):\n    send_email(user.email, \"Welcome\", \"Hello\")\n",
			},
			head: repo{
				"bank/api.py":    "def show(repo, i):\n    return repo.find(i)\n\n\ndef balance(repo, i):\n    return repo.find(i).balance_cents\n",
				"mail/sender.py": "def send_email(to, body, subject):\n    pass\n",
			},
			file: "mail/sender.py",
			want: []string{"call site accounts/welcome.py:4-5 send_email"},
		},
		{
			name: "typescript: definition with the constant it reads",
			base: repo{
				"src/features.ts": "const features: Record<string, Feature> = {\n  sso: { enabled: false },\n};\n\n/** Returns the feature, or undefined. */\nexport function feature(name: string): Feature | undefined {\n  return features[name];\n}\n",
				"src/limits.ts":   "export function limit(): number {\n  return 0;\n}\n",
			},
			head: repo{"src/limits.ts": "import { feature } from \"./features\";\n\nexport function limit(): number {\n  return feature(\"sso\").limit;\n}\n"},
			file: "src/limits.ts",
			want: []string{
				"definition src/features.ts:5-8 feature",
				"declaration src/features.ts:1-3 features (used by feature)",
			},
		},
		{
			name: "javascript: arrow function definition",
			base: repo{
				"lib/audit.js":  "// Stores an entry; rejects when the table is down.\nexport const audit = async (action) => {\n  await db.insert(action);\n};\n",
				"lib/delete.js": "export async function remove(id) {\n  await db.delete(id);\n}\n",
			},
			head: repo{"lib/delete.js": "export async function remove(id) {\n  await db.delete(id);\n  audit(\"delete\");\n}\n"},
			file: "lib/delete.js",
			want: []string{"definition lib/audit.js:1-4 audit"},
		},
		{
			name: "tsx: call site of a changed component helper",
			base: repo{
				"ui/format.ts": "export function price(cents: number): string {\n  return (cents / 100).toFixed(2);\n}\n",
				"ui/Cart.tsx":  "import { price } from \"./format\";\n\nexport function Cart({ total }: { total: number }) {\n  return <span>{price(total)}</span>;\n}\n",
			},
			head: repo{"ui/format.ts": "export function price(euros: number): string {\n  return euros.toFixed(2);\n}\n"},
			file: "ui/format.ts",
			want: []string{"call site ui/Cart.tsx:3-5 price"},
		},
		{
			name: "java: caller shown with its small class (the constant it passes)",
			base: repo{
				"src/cart/Pricing.java":  "package cart;\n\npublic class Pricing {\n    public static long applyDiscount(long cents, double percent) {\n        return (long) (cents * (1 - percent / 100));\n    }\n}\n",
				"src/cart/Checkout.java": "package cart;\n\npublic class Checkout {\n    private static final double LOYALTY_PERCENT = 15;\n\n    public long total(long c) {\n        return Pricing.applyDiscount(c, LOYALTY_PERCENT);\n    }\n}\n",
			},
			head: repo{"src/cart/Pricing.java": "package cart;\n\npublic class Pricing {\n    public static long applyDiscount(long cents, double fraction) {\n        return (long) (cents * (1 - fraction));\n    }\n}\n"},
			file: "src/cart/Pricing.java",
			want: []string{"call site src/cart/Checkout.java:3-9 applyDiscount"},
		},
		{
			name: "java: definition with its javadoc",
			base: repo{
				"src/shop/UserRepository.java": "package shop;\n\npublic class UserRepository {\n    /** Returns the user, or null when there is none. */\n    public User findByEmail(String email) {\n        return null;\n    }\n}\n",
				"src/shop/Export.java":         "package shop;\n\nclass Export {\n    long owner(UserRepository r, String e) {\n        return 0;\n    }\n}\n",
			},
			head: repo{"src/shop/Export.java": "package shop;\n\nclass Export {\n    long owner(UserRepository r, String e) {\n        return r.findByEmail(e).getId();\n    }\n}\n"},
			file: "src/shop/Export.java",
			want: []string{"definition src/shop/UserRepository.java:4-7 findByEmail"},
		},
		{
			name: "other languages get nothing",
			base: repo{"a.rb": "def f\n  1\nend\n"},
			head: repo{"a.rb": "def f\n  2\nend\n"},
			file: "a.rb",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkSnippets(t, tt.base, tt.head, tt.file, tt.want) })
	}
}

// checkSnippets collects the change from base to head and compares the
// snippets of file with want.
func checkSnippets(t *testing.T, base, head repo, file string, want []string) {
	t.Helper()
	checkSnippetsWith(t, Options{}, base, head, file, want)
}

// checkSnippetsWith is checkSnippets with opts.
func checkSnippetsWith(t *testing.T, opts Options, base, head repo, file string, want []string) {
	t.Helper()
	d := gitDiff(t, base, head)
	res, err := Collect(t.Context(), merged(base, head), d.Files, opts)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, brief(res.ByFile[file])); diff != "" {
		t.Errorf("snippets (-want +got):\n%s", diff)
	}
}

// diffOnly is a bare diff's Reader: no file can be read, only the changed
// files are listed.
type diffOnly []string

func (d diffOnly) ReadFile(_ context.Context, p string, _ review.Revision) ([]byte, error) {
	return nil, fmt.Errorf("%s: %w", p, review.ErrNotFound)
}

func (d diffOnly) ListFiles(context.Context) ([]string, error) { return d, nil }

func TestCollectFromDiffAlone(t *testing.T) {
	if !Available {
		t.Skip("no parser without cgo")
	}
	// Two changed files: the definition the first uses is in the hunks
	// of the second, beyond what the first's hunks show.
	base := repo{
		"a/a.go": "package a\n\nfunc Use() int {\n\treturn 0\n}\n",
		"b/b.go": "package b\n\n// Helper may return nil.\nfunc Helper() *int {\n\treturn new(int)\n}\n",
	}
	head := repo{
		"a/a.go": "package a\n\nfunc Use() int {\n\treturn *Helper()\n}\n",
		"b/b.go": "package b\n\n// Helper may return nil.\nfunc Helper() *int {\n\treturn nil\n}\n",
	}
	d := gitDiff(t, base, head)
	res, err := Collect(t.Context(), diffOnly{"a/a.go", "b/b.go"}, d.Files, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"definition b/b.go:3-6 Helper"}
	if diff := cmp.Diff(want, brief(res.ByFile["a/a.go"])); diff != "" {
		t.Errorf("snippets (-want +got):\n%s", diff)
	}
}

func TestCollectLimits(t *testing.T) {
	if !Available {
		t.Skip("no parser without cgo")
	}
	base := repo{"a/a.go": "package a\n\nfunc F() int {\n\treturn 0\n}\n"}
	for i := range 10 {
		base[fmt.Sprintf("c/c%d.go", i)] = "package c\n\nfunc G() int {\n\treturn a.F()\n}\n"
	}
	head := repo{"a/a.go": "package a\n\nfunc F() int {\n\treturn 1\n}\n"}
	d := gitDiff(t, base, head)
	res, err := Collect(t.Context(), merged(base, head), d.Files, Options{Limits: Limits{MaxFiles: 3}})
	if err != nil {
		t.Fatal(err)
	}
	if res.FilesRead > 3 {
		t.Errorf("FilesRead = %d, want at most 3", res.FilesRead)
	}
	want := []string{"call site c/c0.go:3-5 F", "call site c/c1.go:3-5 F"} // a.go, c0.go and c1.go read
	if diff := cmp.Diff(want, brief(res.ByFile["a/a.go"])); diff != "" {
		t.Errorf("snippets (-want +got):\n%s", diff)
	}
	if len(res.Notes) != 1 {
		t.Errorf("notes = %q, want one about the file limit", res.Notes)
	}
}

func TestRender(t *testing.T) {
	s := Snippet{Kind: Definition, Path: "p/x.go", Name: "X", Start: 9, End: 10, Lines: []string{"// X is.", "func X() {}"}}
	want := "p/x.go:9-10 (definition: X)\n 9  // X is.\n10  func X() {}\n"
	if got := Render(s); got != want {
		t.Errorf("Render = %q, want %q", got, want)
	}
}
