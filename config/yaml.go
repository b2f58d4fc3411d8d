package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// LineError is a problem at a line of a configuration file. Its text is
// "file:line: message", or "file: message" when the line is unknown.
type LineError struct {
	// File is the file's name as the user knows it.
	File string
	// Line is 1-based; 0 when unknown.
	Line int
	// Msg says what is wrong, starting with the key path where there is one.
	Msg string
}

// Error implements error.
func (e *LineError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

// positions maps a key path ("auto_review.drafts", "path_filters[2]") to the
// line it was written on.
type positions map[string]int

// decodeYAML decodes one YAML document from data into out, a pointer to a
// struct already holding defaults; keys the document leaves out keep them.
// Decoding is strict: before yaml.v3 (with KnownFields) decodes, the document
// is checked against out's type so that every unknown key and every value of
// the wrong kind is reported at once, with its line and key path. An empty
// document leaves out unchanged. The returned positions locate each key for
// later validation messages.
func decodeYAML(file string, data []byte, out any) (positions, error) {
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return positions{}, nil
		}
		return nil, yamlError(file, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, &LineError{File: file, Line: extra.Line, Msg: "only one YAML document is allowed"}
	}

	c := checker{file: file, pos: positions{}}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	if isNull(root) {
		return c.pos, nil
	}
	c.check(root, reflect.TypeOf(out).Elem(), "")
	if len(c.errs) > 0 {
		return nil, errors.Join(c.errs...)
	}

	strict := yaml.NewDecoder(bytes.NewReader(data))
	strict.KnownFields(true)
	if err := strict.Decode(out); err != nil {
		return nil, yamlError(file, err)
	}
	return c.pos, nil
}

// yamlError turns a yaml.v3 error ("yaml: line 3: ...") into LineErrors.
func yamlError(file string, err error) error {
	var te *yaml.TypeError
	if errors.As(err, &te) {
		errs := make([]error, 0, len(te.Errors))
		for _, msg := range te.Errors {
			errs = append(errs, lineError(file, msg))
		}
		return errors.Join(errs...)
	}
	return lineError(file, strings.TrimPrefix(err.Error(), "yaml: "))
}

// lineError parses yaml.v3's "line N: msg" form.
func lineError(file, msg string) *LineError {
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if num, text, ok := strings.Cut(rest, ": "); ok {
			if n, err := strconv.Atoi(num); err == nil {
				return &LineError{File: file, Line: n, Msg: text}
			}
		}
	}
	return &LineError{File: file, Msg: msg}
}

// checker walks a YAML node tree beside the Go type it will be decoded into.
type checker struct {
	file string
	pos  positions
	errs []error
}

func (c *checker) fail(n *yaml.Node, format string, args ...any) {
	c.errs = append(c.errs, &LineError{File: c.file, Line: n.Line, Msg: fmt.Sprintf(format, args...)})
}

// check reports what in n cannot be decoded into a value of type t. path is
// the key path of n, "" for the document root.
func (c *checker) check(n *yaml.Node, t reflect.Type, path string) {
	if n.Kind == yaml.AliasNode {
		c.fail(n, "%sYAML aliases (*%s) are not supported", prefix(path), n.Value)
		return
	}
	if isNull(n) {
		return // yaml.v3 keeps the default (or empties a list or map)
	}
	switch {
	case t == reflect.TypeFor[time.Duration]():
		_, err := time.ParseDuration(n.Value)
		switch {
		case n.Kind != yaml.ScalarNode:
			c.fail(n, "%smust be a duration such as 30s or 2m, not %s", prefix(path), kindName(n))
		case err != nil && n.ShortTag() == "!!int":
			c.fail(n, "%s%s needs a unit, such as %ss", prefix(path), n.Value, n.Value)
		case err != nil:
			c.fail(n, "%s%q is not a duration such as 30s or 2m", prefix(path), n.Value)
		}
	case t.Kind() == reflect.String:
		if n.Kind != yaml.ScalarNode {
			c.fail(n, "%smust be a string, not %s", prefix(path), kindName(n))
		}
	case t.Kind() == reflect.Bool:
		if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!bool" {
			c.fail(n, "%s%s is not true or false", prefix(path), describe(n))
		}
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Int64:
		v := reflect.New(t)
		if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" || n.Decode(v.Interface()) != nil {
			c.fail(n, "%s%s is not an integer", prefix(path), describe(n))
		}
	case t.Kind() == reflect.Float64:
		if n.Kind != yaml.ScalarNode || (n.ShortTag() != "!!int" && n.ShortTag() != "!!float") {
			c.fail(n, "%s%s is not a number", prefix(path), describe(n))
		}
	case t.Kind() == reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			c.fail(n, "%smust be a list, not %s", prefix(path), kindName(n))
			return
		}
		for i, e := range n.Content {
			p := fmt.Sprintf("%s[%d]", path, i)
			c.pos[p] = e.Line
			c.check(e, t.Elem(), p)
		}
	case t.Kind() == reflect.Map:
		if n.Kind != yaml.MappingNode {
			c.fail(n, "%smust be a mapping, not %s", prefix(path), kindName(n))
			return
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			p := join(path, k.Value)
			c.pos[p] = k.Line
			c.check(v, t.Elem(), p)
		}
	case t.Kind() == reflect.Struct:
		if n.Kind != yaml.MappingNode {
			c.fail(n, "%smust be a mapping of keys to values, not %s", prefix(path), kindName(n))
			return
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			p := join(path, k.Value)
			f, ok := fieldByKey(t, k.Value)
			if !ok {
				c.fail(k, "unknown key %q", p)
				continue
			}
			c.pos[p] = k.Line
			c.check(v, f.Type, p)
		}
	default:
		c.fail(n, "%scannot be set from YAML", prefix(path))
	}
}

// fieldByKey finds the exported field of struct type t whose yaml tag names
// key.
func fieldByKey(t reflect.Type, key string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if f.IsExported() && name == key && name != "" && name != "-" {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

func isNull(n *yaml.Node) bool {
	return n.Kind == 0 || n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func prefix(path string) string {
	if path == "" {
		return ""
	}
	return path + ": "
}

// describe shows a node in a message: a scalar quoted, else its kind.
func describe(n *yaml.Node) string {
	if n.Kind == yaml.ScalarNode {
		return strconv.Quote(n.Value)
	}
	return kindName(n)
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "a list"
	case yaml.MappingNode:
		return "a mapping"
	default:
		return "a single value"
	}
}
