package codectx

import (
	"testing"
)

// TestCollectResolvesNames: builtins and standard-library names never
// match the repository's definitions, and a call on self/this resolves to
// the enclosing class.
func TestCollectResolvesNames(t *testing.T) {
	if !Available {
		t.Skip("no parser without cgo")
	}
	tests := []struct {
		name       string
		base, head repo
		file       string
		want       []string
	}{
		{
			name: "python: str.format and len are builtins, not the repository's format",
			base: repo{
				"app/log.py":  "def format(record):\n    \"\"\"Render a log record.\"\"\"\n    return str(record)\n\n\ndef len(items):\n    return 0\n",
				"app/view.py": "def title(name):\n    return name\n",
			},
			head: repo{"app/view.py": "def title(name):\n    return \"{} ({})\".format(name, len(name))\n"},
			file: "app/view.py",
		},
		{
			name: "python: self.get resolves to the enclosing class",
			base: repo{
				"app/cache.py":   "class Cache:\n    def get(self, key):\n        return None\n",
				"app/session.py": "class Session:\n    def get(self, key):\n        \"\"\"Return the session value.\"\"\"\n        return self.data[key]\n\n    def user(self):\n        return None\n",
			},
			head: repo{"app/session.py": "class Session:\n    def get(self, key):\n        \"\"\"Return the session value.\"\"\"\n        return self.data[key]\n\n    def user(self):\n        return self.get(\"user\")\n"},
			file: "app/session.py",
			want: []string{"definition app/session.py:2-4 get"},
		},
		{
			name: "javascript: push and map are Array methods, not the repository's",
			base: repo{
				"lib/queue.js": "export class Queue {\n  push(job) {\n    this.jobs.push(job);\n  }\n  map(fn) {\n    return [];\n  }\n}\n",
				"lib/ids.js":   "export function ids(users) {\n  return [];\n}\n",
			},
			head: repo{"lib/ids.js": "export function ids(users) {\n  const out = [];\n  users.map((u) => out.push(u.id));\n  return out;\n}\n"},
			file: "lib/ids.js",
		},
		{
			name: "java: toString and equals are Object's",
			base: repo{
				"src/a/Money.java": "package a;\n\npublic class Money {\n    public String toString() {\n        return \"\";\n    }\n}\n",
				"src/a/Label.java": "package a;\n\nclass Label {\n    String text(Object o) {\n        return \"\";\n    }\n}\n",
			},
			head: repo{"src/a/Label.java": "package a;\n\nclass Label {\n    String text(Object o) {\n        return o.toString();\n    }\n}\n"},
			file: "src/a/Label.java",
		},
		{
			name: "python: module.func() is the module's function, not a method of the same name",
			base: repo{
				"pkg/api.py":      "def post(url, data=None):\n    \"\"\"Send a POST request.\"\"\"\n    return None\n",
				"pkg/sessions.py": "class Session:\n    def post(self, url, data=None):\n        return None\n",
				"tests/test_x.py": "import pkg\n\n\ndef test_x():\n    pass\n",
			},
			head: repo{"tests/test_x.py": "import pkg\n\n\ndef test_x():\n    pkg.post(\"u\")\n"},
			file: "tests/test_x.py",
			want: []string{"definition pkg/api.py:1-3 post"},
		},
		{
			name: "javascript: a call of the file's own variable is not another file's variable of that name",
			base: repo{
				"test/a.js": "var express = require('../');\n\nit('a', function () {\n  var app = express();\n});\n",
				"test/b.js": "var express = require('..');\n\nit('b', function () {\n});\n",
			},
			head: repo{"test/b.js": "var express = require('..');\n\nit('b', function () {\n  var app = express();\n  app.listen(0);\n});\n"},
			file: "test/b.js",
		},
		{
			name: "python: a module-level constant read by a changed line",
			base: repo{
				"net/config.py": "import os\n\n# Retries of a failed request.\nMAX_RETRIES = 3\n",
				"net/client.py": "from net.config import MAX_RETRIES\n\n\ndef send(req):\n    return req\n",
			},
			head: repo{"net/client.py": "from net.config import MAX_RETRIES\n\n\ndef send(req):\n    for _ in range(MAX_RETRIES):\n        pass\n    return req\n"},
			file: "net/client.py",
			want: []string{"definition net/config.py:3-4 MAX_RETRIES"},
		},
		{
			name: "typescript: an exported constant read by a changed line",
			base: repo{
				"src/limits.ts": "/** In milliseconds. */\nexport const DEFAULT_TIMEOUT = 5000;\n",
				"src/http.ts":   "export function get(url: string) {\n  return fetch(url);\n}\n",
			},
			head: repo{"src/http.ts": "export function get(url: string) {\n  return fetch(url, { timeout: DEFAULT_TIMEOUT });\n}\n"},
			file: "src/http.ts",
			want: []string{"definition src/limits.ts:1-2 DEFAULT_TIMEOUT"},
		},
		{
			name: "python: a parameter's annotation says the receiver's class",
			base: repo{
				"app/models.py": "class Cart:\n    def total(self):\n        return 0\n\n\nclass Invoice:\n    def total(self):\n        \"\"\"The amount due.\"\"\"\n        return 1\n",
				"app/view.py":   "def show(inv: Invoice):\n    return None\n",
			},
			head: repo{"app/view.py": "def show(inv: Invoice):\n    return inv.total()\n"},
			file: "app/view.py",
			want: []string{"definition app/models.py:7-9 total"},
		},
		{
			name: "python: a variable assigned a constructor call",
			base: repo{
				"app/models.py": "class Cart:\n    def total(self):\n        return 0\n\n\nclass Invoice:\n    def total(self):\n        return 1\n",
				"app/view.py":   "def show():\n    return None\n",
			},
			head: repo{"app/view.py": "def show():\n    cart = Cart()\n    return cart.total()\n"},
			file: "app/view.py",
			want: []string{"definition app/models.py:1-3 Cart"}, // the class, which holds its total
		},
		{
			name: "typescript: new Foo() and a typed parameter",
			base: repo{
				"src/a.ts": "export class Queue {\n  size() {\n    return 0;\n  }\n}\nexport class Stack {\n  size() {\n    return 1;\n  }\n}\n",
				"src/b.ts": "export function f(s: Stack) {\n  return 0;\n}\n",
			},
			head: repo{"src/b.ts": "export function f(s: Stack) {\n  const q = new Queue();\n  return q.size() + s.size();\n}\n"},
			file: "src/b.ts",
			want: []string{"definition src/a.ts:1-5 Queue", "definition src/a.ts:7-9 size"},
		},
		{
			name: "typescript: a receiver of a class the repository does not define matches nothing",
			base: repo{
				"src/a.ts": "export class Queue {\n  size() {\n    return 0;\n  }\n}\n",
				"src/b.ts": "export function f(m: Map<string, number>) {\n  return 0;\n}\n",
			},
			head: repo{"src/b.ts": "export function f(m: Map<string, number>) {\n  return m.size();\n}\n"},
			file: "src/b.ts",
		},
		{
			name: "java: a local variable's declared type",
			base: repo{
				"src/a/Cart.java":    "package a;\n\nclass Cart {\n    int total() {\n        return 0;\n    }\n}\n",
				"src/a/Invoice.java": "package a;\n\nclass Invoice {\n    int total() {\n        return 1;\n    }\n}\n",
				"src/a/View.java":    "package a;\n\nclass View {\n    int show() {\n        return 0;\n    }\n}\n",
			},
			head: repo{"src/a/View.java": "package a;\n\nclass View {\n    int show() {\n        Invoice inv = new Invoice();\n        return inv.total();\n    }\n}\n"},
			file: "src/a/View.java",
			want: []string{"definition src/a/Invoice.java:3-7 Invoice"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkSnippets(t, tt.base, tt.head, tt.file, tt.want) })
	}
}
