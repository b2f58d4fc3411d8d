// Package lang names the programming language of a file from its path, as
// shown to models and in a verdict's files[].language.
package lang

import (
	"path"
	"strings"
)

// Detect returns the language of the file at p, by its name or extension
// ("go", "python", "typescript", "dockerfile"...), or "" when unknown.
func Detect(p string) string {
	base := strings.ToLower(path.Base(p))
	switch base {
	case "dockerfile", "containerfile":
		return "dockerfile"
	case "makefile", "gnumakefile":
		return "makefile"
	case "go.mod", "go.sum", "go.work":
		return "go-module"
	case "cmakelists.txt":
		return "cmake"
	case "gemfile", "rakefile":
		return "ruby"
	case "jenkinsfile":
		return "groovy"
	}
	if strings.HasPrefix(base, "dockerfile.") {
		return "dockerfile"
	}
	ext := strings.TrimPrefix(path.Ext(base), ".")
	switch ext {
	case "go":
		return "go"
	case "py", "pyi":
		return "python"
	case "js", "mjs", "cjs":
		return "javascript"
	case "jsx":
		return "jsx"
	case "ts", "mts", "cts":
		return "typescript"
	case "tsx":
		return "tsx"
	case "java":
		return "java"
	case "kt", "kts":
		return "kotlin"
	case "scala", "sc":
		return "scala"
	case "groovy", "gradle":
		return "groovy"
	case "rb":
		return "ruby"
	case "rs":
		return "rust"
	case "c", "h":
		return "c"
	case "cc", "cpp", "cxx", "hh", "hpp", "hxx":
		return "cpp"
	case "cs":
		return "csharp"
	case "fs", "fsx":
		return "fsharp"
	case "m", "mm":
		return "objective-c"
	case "swift":
		return "swift"
	case "php":
		return "php"
	case "pl", "pm":
		return "perl"
	case "lua":
		return "lua"
	case "dart":
		return "dart"
	case "ex", "exs":
		return "elixir"
	case "erl", "hrl":
		return "erlang"
	case "hs":
		return "haskell"
	case "ml", "mli":
		return "ocaml"
	case "clj", "cljs", "cljc", "edn":
		return "clojure"
	case "r":
		return "r"
	case "jl":
		return "julia"
	case "zig":
		return "zig"
	case "sh", "bash", "zsh":
		return "shell"
	case "ps1", "psm1":
		return "powershell"
	case "sql":
		return "sql"
	case "html", "htm":
		return "html"
	case "css":
		return "css"
	case "scss", "sass":
		return "scss"
	case "less":
		return "less"
	case "vue":
		return "vue"
	case "svelte":
		return "svelte"
	case "json", "jsonc":
		return "json"
	case "yaml", "yml":
		return "yaml"
	case "toml":
		return "toml"
	case "xml", "xsd", "xsl":
		return "xml"
	case "ini", "cfg", "conf":
		return "ini"
	case "md", "markdown":
		return "markdown"
	case "rst":
		return "restructuredtext"
	case "proto":
		return "protobuf"
	case "graphql", "gql":
		return "graphql"
	case "tf", "tfvars", "hcl":
		return "hcl"
	case "nix":
		return "nix"
	case "cmake":
		return "cmake"
	case "tpl", "tmpl", "gotmpl":
		return "template"
	}
	return ""
}
