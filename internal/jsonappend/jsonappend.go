// Package jsonappend writes the JSON of the hot path's fixed shapes (a
// purchase's answer, an order event) by hand: byte for byte what
// encoding/json writes with SetEscapeHTML(false), without its reflection
// and allocations. Each shape's test holds its encoder to encoding/json.
package jsonappend

import (
	"bytes"
	"encoding/json"
)

// String appends s as a JSON string. Printable ASCII other than '"' and
// '\\' is written as it is; anything else (control characters, non-ASCII,
// which encoding/json validates and escapes in part) is left to
// encoding/json, so the output is always its own.
func String(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x80 || c == '"' || c == '\\' {
			return stringSlow(b, s)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

func stringSlow(b []byte, s string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return append(b, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
}

// Member appends `,"name":` (no comma for the first member). name is
// written as it is: a constant of the shape, which needs no escape.
func Member(b []byte, name string, first bool) []byte {
	if !first {
		b = append(b, ',')
	}
	b = append(b, '"')
	b = append(b, name...)
	return append(b, '"', ':')
}
