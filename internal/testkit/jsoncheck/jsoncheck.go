// Package jsoncheck holds a hand-written JSON encoder (internal/jsonappend)
// to encoding/json: what encoding/json writes with SetEscapeHTML(false),
// without the final newline, for the empty value and for values with every
// field set to awkward strings and to small, negative and large numbers.
package jsoncheck

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

// Standard is v as encoding/json writes it without HTML escaping, without
// the final newline.
func Standard(t testing.TB, v any) string {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return string(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
}

// AwkwardStrings are strings a message or an id may hold: plain, HTML,
// quotes and backslashes, control characters, non-ASCII, the line
// separators encoding/json escapes, invalid UTF-8, DEL.
var AwkwardStrings = []string{"", "ord-1", "Bearer <token> & co", `say "hi" \ bye`, "tab\there\nnew\r\x00\x1f\b\f",
	"Moutai 53% 茅台", "line\u2028sep\u2029", "bad \xff\xfe utf-8", "del\x7f"}

// Check fails t where appendJSON of a T writes other than encoding/json:
// the empty T (the omitempty fields left out), and a T with every field
// set, nested structs and pointers included, to each awkward string and to
// small, negative and large numbers, appended after a byte already there.
// It can fail on a field added to T but not to its encoder, a member's name
// or order changed on one side, an escape done differently.
func Check[T any](t *testing.T, appendJSON func(T, []byte) []byte) {
	t.Helper()
	var empty T
	if got, want := string(appendJSON(empty, nil)), Standard(t, empty); got != want {
		t.Errorf("%T empty: got %s, want %s", empty, got, want)
	}
	for _, s := range AwkwardStrings {
		for _, n := range []int64{1, -7, 1 << 62} {
			var full T
			fill(reflect.ValueOf(&full).Elem(), s, n)
			if got, want := string(appendJSON(full, []byte("x"))), "x"+Standard(t, full); got != want {
				t.Errorf("%T: got %s, want %s", full, got, want)
			}
		}
	}
}

// fill sets every field of the struct v, nested structs and pointers to
// them included: strings to s, integers to n. A field added to a shape is
// set here too, so its encoder must write it.
func fill(v reflect.Value, s string, n int64) {
	for i := range v.NumField() {
		f := v.Field(i)
		switch f.Kind() {
		case reflect.String:
			f.SetString(s)
		case reflect.Int, reflect.Int64, reflect.Int32:
			f.SetInt(n)
		case reflect.Struct:
			fill(f, s, n)
		case reflect.Pointer:
			f.Set(reflect.New(f.Type().Elem()))
			if f.Elem().Kind() == reflect.Struct {
				fill(f.Elem(), s, n)
			} else {
				f.Elem().SetInt(n)
			}
		default:
			panic("fill: a field of kind " + f.Kind().String() + ": teach fill and the encoder")
		}
	}
}
