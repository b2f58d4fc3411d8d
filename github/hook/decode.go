package hook

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math/bits"
	"reflect"
	"strings"
)

// Decoder decodes webhook payloads into T, one of the event types of
// events.go, with the result of json.Unmarshal: the same value, and an
// error exactly when json.Unmarshal returns one (its error). It reads a
// payload once: it validates the JSON as it goes, skips what T has no
// field for without decoding it, walks into the objects of T's struct
// fields and hands only the values of T's other fields to json.Unmarshal.
// json.Unmarshal first validates the whole payload and then scans it again
// to decode it, which costs most of a 28 KB pull_request payload's intake.
// Whatever the walk does not handle exactly as json.Unmarshal would (an
// escaped or case-folded key, invalid JSON, an error decoding a value, a
// type with options it does not know) makes it decode the payload with
// json.Unmarshal instead.
type Decoder[T any] struct {
	root *structFields // nil: always json.Unmarshal
}

// NewDecoder returns the decoder of T's payloads.
func NewDecoder[T any]() Decoder[T] {
	return Decoder[T]{root: fieldsOf(reflect.TypeFor[T]())}
}

// Decode decodes payload into v as json.Unmarshal(payload, v) does.
func (d Decoder[T]) Decode(payload []byte, v *T) error {
	if d.root != nil {
		var fast T
		w := walker{data: payload}
		if w.object(d.root, reflect.ValueOf(&fast).Elem(), 0) && w.end() {
			*v = fast
			return nil
		}
	}
	return json.Unmarshal(payload, v)
}

// structFields are the JSON fields of a struct type.
type structFields struct {
	names  []string
	index  []int
	nested []*structFields // the fields of a field that is a struct, else nil
}

// fieldsOf returns the fields of struct type t, nil when t is not a
// struct or has a field the walk does not decode as json.Unmarshal
// would: embedded, tagged with options other than omitempty, or two
// names alike but for case.
func fieldsOf(t reflect.Type) *structFields {
	if t.Kind() != reflect.Struct {
		return nil
	}
	f := &structFields{}
	for i := range t.NumField() {
		sf := t.Field(i)
		if sf.Anonymous {
			return nil
		}
		if !sf.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if name == "-" && opts == "" {
			continue
		}
		if opts != "" && opts != "omitempty" {
			return nil
		}
		if name == "" {
			name = sf.Name
		}
		for _, other := range f.names {
			if strings.EqualFold(other, name) {
				return nil
			}
		}
		var nested *structFields
		if sf.Type.Kind() == reflect.Struct {
			if nested = fieldsOf(sf.Type); nested == nil {
				return nil
			}
		}
		f.names, f.index, f.nested = append(f.names, name), append(f.index, i), append(f.nested, nested)
	}
	return f
}

// lookup returns the field named key; ok is false when the key only
// matches a field but for case (left to json.Unmarshal) — found is false
// when no field has that name.
func (f *structFields) lookup(key []byte) (i int, found, ok bool) {
	for i, name := range f.names {
		if string(key) == name {
			return i, true, true
		}
	}
	for _, name := range f.names {
		if bytes.EqualFold(key, []byte(name)) {
			return 0, true, false
		}
	}
	return 0, false, true
}

// maxDepth is json.Unmarshal's nesting limit: deeper is left to it.
const maxDepth = 10000

// walker reads one JSON document. Its methods return false when the
// document is not valid JSON or holds something left to json.Unmarshal.
type walker struct {
	data []byte
	pos  int
}

// object decodes the object at the current position into v, a struct of
// fields f.
func (w *walker) object(f *structFields, v reflect.Value, depth int) bool {
	w.space()
	if !w.consume('{') || depth >= maxDepth {
		return false
	}
	w.space()
	if w.consume('}') {
		return true
	}
	for {
		w.space()
		key, ok := w.key()
		if !ok {
			return false
		}
		w.space()
		if !w.consume(':') {
			return false
		}
		w.space()
		if !w.member(f, v, key, depth) {
			return false
		}
		w.space()
		if w.consume('}') {
			return true
		}
		if !w.consume(',') {
			return false
		}
	}
}

// member decodes the value of key into its field of v, or skips it.
func (w *walker) member(f *structFields, v reflect.Value, key []byte, depth int) bool {
	i, found, ok := f.lookup(key)
	switch {
	case !ok:
		return false
	case !found:
		return w.skip(depth + 1)
	case f.nested[i] != nil && w.peek() == '{':
		return w.object(f.nested[i], v.Field(f.index[i]), depth+1)
	}
	start := w.pos
	if !w.skip(depth + 1) {
		return false
	}
	return json.Unmarshal(w.data[start:w.pos], v.Field(f.index[i]).Addr().Interface()) == nil
}

// end reports whether only white space follows.
func (w *walker) end() bool {
	w.space()
	return w.pos == len(w.data)
}

func (w *walker) peek() byte {
	if w.pos < len(w.data) {
		return w.data[w.pos]
	}
	return 0
}

func (w *walker) consume(c byte) bool {
	if w.peek() == c && w.pos < len(w.data) {
		w.pos++
		return true
	}
	return false
}

// space skips white space.
func (w *walker) space() {
	if w.pos < len(w.data) && w.data[w.pos] > ' ' {
		return // the usual case, inlined
	}
	w.whiteSpace()
}

// whiteSpace is space past its first byte: it skips the white space
// there.
func (w *walker) whiteSpace() {
	d, i := w.data, w.pos
	for i < len(d) {
		switch d[i] {
		case ' ':
			i = pastSpaces(d, i)
		case '\t', '\n', '\r':
			i++
		default:
			w.pos = i
			return
		}
	}
	w.pos = i
}

// pastSpaces returns the index of the first byte of d at or after i that
// is not a space (U+0020), len(d) if none: indentation, eight bytes at a
// time.
func pastSpaces(d []byte, i int) int {
	for ; i+8 <= len(d); i += 8 {
		if e := binary.LittleEndian.Uint64(d[i:]) ^ spaces; e != 0 {
			return i + bits.TrailingZeros64(e)>>3
		}
	}
	for i < len(d) && d[i] == ' ' {
		i++
	}
	return i
}

// key reads an object key; one with an escape is left to json.Unmarshal.
func (w *walker) key() ([]byte, bool) {
	start := w.pos + 1
	escaped, ok := w.str()
	if !ok || escaped {
		return nil, false
	}
	return w.data[start : w.pos-1], true
}

// skip validates the value at the current position and moves past it.
func (w *walker) skip(depth int) bool {
	if depth >= maxDepth {
		return false
	}
	switch c := w.peek(); {
	case c == '"':
		_, ok := w.str()
		return ok
	case c == '{':
		return w.skipComposite('}', depth, true)
	case c == '[':
		return w.skipComposite(']', depth, false)
	case c == 't':
		return w.literal("true")
	case c == 'f':
		return w.literal("false")
	case c == 'n':
		return w.literal("null")
	case c == '-' || c >= '0' && c <= '9':
		return w.number()
	}
	return false
}

// skipComposite skips an object (keyed) or an array ending with closer.
func (w *walker) skipComposite(closer byte, depth int, keyed bool) bool {
	w.pos++
	w.space()
	if w.consume(closer) {
		return true
	}
	for {
		w.space()
		if keyed {
			if _, ok := w.str(); !ok {
				return false
			}
			w.space()
			if !w.consume(':') {
				return false
			}
			w.space()
		}
		if !w.skip(depth + 1) {
			return false
		}
		w.space()
		if w.consume(closer) {
			return true
		}
		if !w.consume(',') {
			return false
		}
	}
}

func (w *walker) literal(lit string) bool {
	if !bytes.HasPrefix(w.data[w.pos:], []byte(lit)) {
		return false
	}
	w.pos += len(lit)
	return true
}

// number skips a number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (w *walker) number() bool {
	w.consume('-')
	switch c := w.peek(); {
	case c == '0':
		w.pos++
	case c >= '1' && c <= '9':
		w.digits()
	default:
		return false
	}
	if w.consume('.') && !w.digits() {
		return false
	}
	if c := w.peek(); c == 'e' || c == 'E' {
		w.pos++
		if c := w.peek(); c == '+' || c == '-' {
			w.pos++
		}
		if !w.digits() {
			return false
		}
	}
	return true
}

// digits skips one or more digits.
func (w *walker) digits() bool {
	start := w.pos
	for w.pos < len(w.data) && w.data[w.pos] >= '0' && w.data[w.pos] <= '9' {
		w.pos++
	}
	return w.pos > start
}

// str validates the string at the current position and moves past it;
// escaped reports whether it holds an escape sequence. Like
// json.Unmarshal, it refuses control characters and accepts any other
// byte.
func (w *walker) str() (escaped, ok bool) {
	d := w.data
	if w.peek() != '"' {
		return false, false
	}
	for i := w.pos + 1; ; {
		i = nextSpecial(d, i)
		if i >= len(d) {
			return false, false
		}
		switch d[i] {
		case '"':
			w.pos = i + 1
			return escaped, true
		case '\\':
			n := escapeLen(d[i:])
			if n == 0 {
				return false, false
			}
			escaped = true
			i += n
		default: // a control character
			return false, false
		}
	}
}

// SWAR constants: one byte repeated eight times.
const (
	ones   = 0x0101010101010101
	highs  = 0x8080808080808080
	quotes = '"' * ones
	slashs = '\\' * ones
	spaces = ' ' * ones
)

// nextSpecial returns the index of the first quote, backslash or control
// character of d at or after i, len(d) if none, eight bytes at a time.
func nextSpecial(d []byte, i int) int {
	for ; i+8 <= len(d); i += 8 {
		if m := specials(binary.LittleEndian.Uint64(d[i:])); m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
	}
	for ; i < len(d); i++ {
		if c := d[i]; c == '"' || c == '\\' || c < 0x20 {
			return i
		}
	}
	return i
}

// specials marks with its high bit each byte of x that is a quote, a
// backslash or a control character. Bytes above the first one marked may
// be marked wrongly (a borrow carries into them), the first one never is:
// its trailing zero count locates it.
func specials(x uint64) uint64 {
	zero := func(v uint64) uint64 { return (v - ones) &^ v & highs }
	return zero(x^quotes) | zero(x^slashs) | (x-0x20*ones)&^x&highs
}

// escapeLen is the length of the escape sequence s begins with, 0 when
// it is not one JSON allows.
func escapeLen(s []byte) int {
	if len(s) < 2 {
		return 0
	}
	switch s[1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return 2
	case 'u':
		if len(s) < 6 {
			return 0
		}
		for _, c := range s[2:6] {
			if (c < '0' || c > '9') && (c < 'a' || c > 'f') && (c < 'A' || c > 'F') {
				return 0
			}
		}
		return 6
	}
	return 0
}
