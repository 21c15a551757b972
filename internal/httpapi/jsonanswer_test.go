package httpapi

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

// standardJSON is what writeJSON wrote before the answers wrote their own:
// encoding/json without HTML escaping, without the final newline.
func standardJSON(t *testing.T, v any) string {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return string(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
}

// fill sets every field of the struct v points to, nested structs and
// pointers to them included: strings to s, integers to n. A field added
// to an answer is set here too, so its encoder must write it.
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

// Strings a message or an id may hold: plain, HTML, quotes and
// backslashes, control characters, non-ASCII, the line separators
// encoding/json escapes, invalid UTF-8, DEL.
var awkwardStrings = []string{"", "ord-1", "Bearer <token> & co", `say "hi" \ bye`, "tab\there\nnew\r\x00\x1f\b\f",
	"Moutai 53% 茅台", "line\u2028sep\u2029", "bad \xff\xfe utf-8", "del\x7f"}

// Every answer that writes its own JSON writes what encoding/json writes,
// with every field empty (the omitempty ones left out) and with every field
// set, to each awkward string and to small, negative and large numbers.
// Can fail: a field added to an answer but not to its appendJSON, a
// member's name or order changed on one side, an escape done differently.
func TestAnswersWriteWhatEncodingJSONWrites(t *testing.T) {
	answers := []jsonAppender{orderResponse{}, errorBody{}, errorDetail{}, statusResponse{}, queueResponse{}}
	for _, a := range answers {
		if got, want := string(a.appendJSON(nil)), standardJSON(t, a); got != want {
			t.Errorf("%T empty: got %s, want %s", a, got, want)
		}
		for _, s := range awkwardStrings {
			for _, n := range []int64{1, -7, 1 << 62} {
				v := reflect.New(reflect.TypeOf(a))
				fill(v.Elem(), s, n)
				full := v.Elem().Interface()
				if got, want := string(full.(jsonAppender).appendJSON([]byte("x"))), "x"+standardJSON(t, full); got != want {
					t.Errorf("%T: got %s, want %s", a, got, want)
				}
			}
		}
	}
}

// encodeAnswer writes a hot shape and any other value alike: what
// encoding/json writes. Can fail: the fallback losing HTML escaping's
// setting or keeping the newline.
func TestEncodeAnswerIsEncodingJSON(t *testing.T) {
	for _, v := range []any{orderResponse{OrderID: "o<1>", ActivityID: 3, UserID: 42, Status: "created", CreatedAt: "2026-11-27T10:00:00Z"},
		statusResponse{Status: "ok"}, map[string]any{"b": []int{1, 2}, "a": "<x>"}} {
		b, err := encodeAnswer(nil, v)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := string(b), standardJSON(t, v); got != want {
			t.Errorf("%T: got %s, want %s", v, got, want)
		}
	}
}
