package codectx

import (
	"errors"

	"github.com/mergeguard/mergeguard/review/lang"
)

// errLanguage is returned for a language without a grammar.
var errLanguage = errors.New("no grammar for the language")

// grammar tells which node kinds of a language matter.
type grammar struct {
	// funcs are function-like definitions, named by their "name" field.
	funcs set
	// types are class-like and type definitions.
	types set
	// vars are named variables and constants; only those outside
	// functions count as definitions.
	vars set
	// nameField is the field naming a var ("name", or "left" for a
	// Python assignment).
	nameField map[string]string
	// wrappers hold a definition with its doc comment before them
	// (export_statement, decorated_definition, type_declaration...).
	wrappers set
	// calls map a call's kind to the field holding the callee.
	calls map[string]string
	// comments are comment kinds.
	comments set
	// builtins are names never looked up: the names a language's
	// builtins and standard library define, which a call in its files
	// means far more often than a repository's definition of the same name
	// (len, print, format; push, map, toString; equals, get on a List).
	builtins set
	// selfNames are the receivers naming the enclosing class's instance
	// (self, this), as node kinds or texts; nil keeps calls bare (Go).
	selfNames set
}

// set is a set of node kinds.
type set map[string]bool

func setOf(kinds ...string) set {
	s := set{}
	for _, k := range kinds {
		s[k] = true
	}
	return s
}

// family groups the languages whose files see each other's definitions.
func family(l string) string {
	switch l {
	case "javascript", "jsx", "typescript", "tsx":
		return "js"
	case "go", "python", "java":
		return l
	}
	return ""
}

// Supported reports whether the file at p is in a language with a grammar
// (Go, Python, JavaScript, TypeScript, Java).
func Supported(p string) bool { return grammarOf(lang.Detect(p)) != nil }

// grammarOf returns the grammar of a language, or nil.
func grammarOf(l string) *grammar {
	switch family(l) {
	case "go":
		return &goGrammar
	case "python":
		return &pythonGrammar
	case "js":
		return &jsGrammar
	case "java":
		return &javaGrammar
	}
	return nil
}

var goGrammar = grammar{
	funcs:     setOf("function_declaration", "method_declaration"),
	types:     setOf("type_spec", "type_alias"),
	vars:      setOf("var_spec", "const_spec"),
	nameField: map[string]string{"var_spec": "name", "const_spec": "name"},
	wrappers:  setOf("type_declaration", "var_declaration", "const_declaration"),
	calls:     map[string]string{"call_expression": "function", "composite_literal": "type"},
	comments:  setOf("comment"),
}

var pythonGrammar = grammar{
	funcs:     setOf("function_definition"),
	types:     setOf("class_definition"),
	vars:      setOf("assignment"),
	nameField: map[string]string{"assignment": "left"},
	wrappers:  setOf("decorated_definition", "expression_statement"),
	calls:     map[string]string{"call": "function"},
	comments:  setOf("comment"),
	builtins:  pythonBuiltins,
	selfNames: setOf("self", "cls"),
}

var jsGrammar = grammar{
	funcs: setOf("function_declaration", "generator_function_declaration", "method_definition",
		"function_signature", "method_signature", "abstract_method_signature"),
	types: setOf("class_declaration", "abstract_class_declaration", "interface_declaration",
		"type_alias_declaration", "enum_declaration"),
	vars:      setOf("variable_declarator", "public_field_definition", "field_definition"),
	nameField: map[string]string{"variable_declarator": "name", "public_field_definition": "name", "field_definition": "property"},
	wrappers:  setOf("export_statement", "lexical_declaration", "variable_declaration"),
	calls:     map[string]string{"call_expression": "function", "new_expression": "constructor"},
	comments:  setOf("comment"),
	builtins:  jsBuiltins,
	selfNames: setOf("this"),
}

var javaGrammar = grammar{
	funcs: setOf("method_declaration", "constructor_declaration"),
	types: setOf("class_declaration", "interface_declaration", "enum_declaration", "record_declaration",
		"annotation_type_declaration"),
	vars:      setOf("variable_declarator"),
	nameField: map[string]string{"variable_declarator": "name"},
	wrappers:  setOf("field_declaration", "constant_declaration"),
	calls:     map[string]string{"method_invocation": "name", "object_creation_expression": "type"},
	comments:  setOf("line_comment", "block_comment"),
	builtins:  javaBuiltins,
	selfNames: setOf("this"),
}
