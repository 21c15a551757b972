package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/seckill-oss/seckill"
)

// Limits of the contract that the edge checks itself.
const (
	maxIdempotencyKey = 64
	maxRequestID      = 64
)

// parseID reads a canonical positive decimal int64: ASCII digits only, no
// sign, no leading zero, 1..9223372036854775807. Anything else, including a
// number that overflows, is not an id.
func parseID(s string) (int64, bool) {
	if s == "" || len(s) > len("9223372036854775807") || s[0] == '0' {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, false
	}
	return n, true
}

// parseUserID reads the buyer's identity from the X-User-ID header, which
// must be sent exactly once.
func parseUserID(h http.Header) (int64, error) {
	vals := h.Values("X-User-ID")
	if len(vals) != 1 {
		return 0, seckill.Errorf(seckill.EUnauthenticated, "send exactly one X-User-ID header")
	}
	id, ok := parseID(vals[0])
	if !ok {
		return 0, seckill.Errorf(seckill.EUnauthenticated, "X-User-ID must be a decimal integer in 1..9223372036854775807")
	}
	return id, nil
}

// parseIdempotencyKey reads the optional Idempotency-Key header: absent, or
// sent once with 1-64 visible ASCII characters.
func parseIdempotencyKey(h http.Header) (string, error) {
	vals := h.Values("Idempotency-Key")
	switch len(vals) {
	case 0:
		return "", nil
	case 1:
		if visibleASCII(vals[0], maxIdempotencyKey) {
			return vals[0], nil
		}
	}
	return "", invalid("Idempotency-Key must be sent once, with 1 to %d visible ASCII characters", maxIdempotencyKey)
}

// visibleASCII reports whether s has 1 to maxLen characters, all in 0x21-0x7E.
func visibleASCII(s string, maxLen int) bool {
	if s == "" || len(s) > maxLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// readBody reads the request body, which limitBody has capped.
func readBody(r *http.Request) ([]byte, error) {
	if r.ContentLength == 0 { // no body (http.NoBody): nothing to read, nor a buffer to make for it
		return nil, nil
	}
	b, err := io.ReadAll(r.Body)
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		return nil, seckill.Errorf(seckill.ETooLarge, "the request body is larger than %d bytes", tooLarge.Limit)
	case err != nil:
		return nil, &seckill.Error{Code: seckill.EInvalid, Message: "the request body could not be read", Err: err}
	}
	return b, nil
}

// decodePurchaseBody reads a purchase body: empty, {} or {"quantity":k}
// with k an integer in 1..seckill.MaxPerUserLimit (0 when absent: one
// unit). The activity's own limit is the purchase's to check.
func decodePurchaseBody(body []byte) (quantity int64, err error) {
	if len(bytes.Trim(body, " \t\r\n")) == 0 {
		return 0, nil
	}
	err = decodeObject(body, map[string]func(json.RawMessage) error{
		"quantity": func(raw json.RawMessage) error {
			var q int64 // null leaves 0: out of range
			if json.Unmarshal(raw, &q) != nil || q < 1 || q > seckill.MaxPerUserLimit {
				return invalid("quantity must be an integer from 1 to the activity's per_user_limit")
			}
			quantity = q
			return nil
		},
	})
	return quantity, err
}

// decodeCreateActivity reads and checks an admin's new activity. The first
// four fields are required; price_minor and currency are optional, but come
// together (docs/API.md "Prices").
func decodeCreateActivity(body []byte) (seckill.Activity, error) {
	var (
		a                  seckill.Activity
		hasName, hasStock  bool
		hasStarts, hasEnds bool
	)
	err := decodeObject(body, map[string]func(json.RawMessage) error{
		"price_minor":    func(raw json.RawMessage) error { return decodePriceMinor(raw, &a.PriceMinor) },
		"currency":       func(raw json.RawMessage) error { return decodeCurrency(raw, &a.Currency) },
		"waiting_room":   func(raw json.RawMessage) error { return decodeRoomField(raw, &a.WaitingRoom) },
		"announced":      func(raw json.RawMessage) error { return decodeAnnounced(raw, &a.Unannounced) },
		"per_user_limit": func(raw json.RawMessage) error { return decodePerUserLimit(raw, &a.PerUserLimit) },
		"name": func(raw json.RawMessage) error {
			s, _ := jsonString(raw) // not a string: "", which the rule refuses
			if err := seckill.ValidateName(s); err != nil {
				return err
			}
			a.Name, hasName = s, true
			return nil
		},
		"total_stock": func(raw json.RawMessage) error {
			var n int64 // null leaves 0: out of range
			if json.Unmarshal(raw, &n) != nil || n < 1 || n > seckill.MaxTotalStock {
				return invalid("total_stock must be an integer in 1..%d", seckill.MaxTotalStock)
			}
			a.TotalStock, hasStock = n, true
			return nil
		},
		"starts_at": func(raw json.RawMessage) error {
			t, err := jsonTime(raw, "starts_at")
			a.StartsAt, hasStarts = t, err == nil
			return err
		},
		"ends_at": func(raw json.RawMessage) error {
			t, err := jsonTime(raw, "ends_at")
			a.EndsAt, hasEnds = t, err == nil
			return err
		},
	})
	switch {
	case err != nil:
		return seckill.Activity{}, err
	case !hasName || !hasStock || !hasStarts || !hasEnds:
		return seckill.Activity{}, invalid("name, total_stock, starts_at and ends_at are all required")
	}
	// The domain's rules (the window, a price with its currency; the
	// limits, checked above per field for a precise message) have the last
	// word.
	if err := a.Validate(); err != nil {
		return seckill.Activity{}, err
	}
	return a, nil
}

// decodePerUserLimit reads create's per_user_limit: an integer in
// 1..seckill.MaxPerUserLimit (docs/API.md "Quantity per buyer").
func decodePerUserLimit(raw json.RawMessage, dst *int64) error {
	var n int64 // null leaves 0: out of range
	if json.Unmarshal(raw, &n) != nil {
		n = 0
	}
	if err := seckill.ValidatePerUserLimit(n); err != nil {
		return err
	}
	*dst = n
	return nil
}

// decodeRoomField reads create's waiting_room: an object (docs/API.md
// "Waiting room"), or null for none.
func decodeRoomField(raw json.RawMessage, dst **seckill.WaitingRoom) error {
	if string(raw) == "null" {
		return nil
	}
	opensAt, err := decodeWaitingRoom(raw)
	if err != nil {
		return err
	}
	*dst = &seckill.WaitingRoom{OpensAt: opensAt}
	return nil
}

// decodeAnnounced reads create's announced: true or false, not null.
func decodeAnnounced(raw json.RawMessage, unannounced *bool) error {
	var b bool
	if string(raw) == "null" || json.Unmarshal(raw, &b) != nil {
		return invalid("announced must be true or false")
	}
	*unannounced = !b
	return nil
}

// decodePrice reads a price change: {"price_minor":N,"currency":"EUR"},
// both required; {"price_minor":null,"currency":null} removes the price.
func decodePrice(body []byte) (priceMinor int64, currency string, err error) {
	var hasPrice, hasCurrency, null bool
	err = decodeObject(body, map[string]func(json.RawMessage) error{
		"price_minor": func(raw json.RawMessage) error {
			hasPrice = true
			if string(raw) == "null" {
				null = true
				return nil
			}
			return decodePriceMinor(raw, &priceMinor)
		},
		"currency": func(raw json.RawMessage) error {
			hasCurrency = true
			if string(raw) == "null" {
				null = true
				return nil
			}
			return decodeCurrency(raw, &currency)
		},
	})
	switch {
	case err != nil:
		return 0, "", err
	case !hasPrice || !hasCurrency:
		return 0, "", invalid("price_minor and currency are both required (both null removes the price)")
	case null && (priceMinor != 0 || currency != ""):
		return 0, "", invalid("price_minor and currency are both null, or neither")
	}
	if err := seckill.ValidPrice(priceMinor, currency); err != nil {
		return 0, "", err
	}
	return priceMinor, currency, nil
}

// decodePriceMinor reads a price in minor units: an integer in
// 1..seckill.MaxPriceMinor (no fraction, no exponent).
func decodePriceMinor(raw json.RawMessage, dst *int64) error {
	var n int64 // null leaves 0: out of range
	if json.Unmarshal(raw, &n) != nil || n < 1 || n > seckill.MaxPriceMinor {
		return invalid("price_minor must be an integer in 1..%d: the price in the currency's minor units, such as cents", seckill.MaxPriceMinor)
	}
	*dst = n
	return nil
}

// decodeCurrency reads an ISO 4217 code: three capital letters.
func decodeCurrency(raw json.RawMessage, dst *string) error {
	s, ok := jsonString(raw)
	if !ok || seckill.ValidPrice(1, s) != nil {
		return invalid("currency must be an ISO 4217 code of three capital letters, such as EUR")
	}
	*dst = s
	return nil
}

// jsonString decodes raw as a JSON string; null is not a string.
func jsonString(raw json.RawMessage) (string, bool) {
	var s string
	if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// jsonTime decodes raw as an RFC 3339 time string, in UTC.
func jsonTime(raw json.RawMessage, field string) (time.Time, error) {
	s, ok := jsonString(raw)
	if ok {
		if t, err := time.Parse(time.RFC3339, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, invalid("%s must be an RFC 3339 time, such as 2026-11-22T10:00:00Z", field)
}

// decodeObject decodes body, which must be exactly one JSON object, handing
// each member's value to the decoder registered under its name. Unlike
// encoding/json's struct decoding, names match exactly (not ignoring case),
// a name may appear only once, and a name without a decoder is an error; the
// body must be valid UTF-8 (encoding/json would silently replace bad bytes).
func decodeObject(body []byte, fields map[string]func(json.RawMessage) error) error {
	return decodeMembers(body, fields, false)
}

// decodeObjectIgnoring is decodeObject, except that a member without a
// decoder is skipped (its value must still be valid JSON).
func decodeObjectIgnoring(body []byte, fields map[string]func(json.RawMessage) error) error {
	return decodeMembers(body, fields, true)
}

func decodeMembers(body []byte, fields map[string]func(json.RawMessage) error, ignoreUnknown bool) error {
	if !utf8.Valid(body) {
		return invalid("the request body is not valid UTF-8")
	}
	malformed := invalid("the request body must be one JSON object")
	dec := json.NewDecoder(bytes.NewReader(body))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return malformed
	}
	seen := make(map[string]bool, len(fields))
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return malformed
		}
		name, ok := tok.(string)
		if !ok {
			return malformed
		}
		decode, known := fields[name]
		switch {
		case !known && ignoreUnknown:
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return malformed
			}
			continue
		case !known:
			return invalid("unknown field %q", truncate(name, 64))
		case seen[name]:
			return invalid("field %q appears more than once", name)
		}
		seen[name] = true
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return malformed
		}
		if err := decode(raw); err != nil {
			return err
		}
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		return malformed
	}
	if _, err := dec.Token(); err != io.EOF {
		return invalid("the request body must hold exactly one JSON value")
	}
	return nil
}

// truncate keeps at most n runes of s, so a client's text echoed in a
// message stays short.
func truncate(s string, n int) string {
	for i := range s {
		if n == 0 {
			return s[:i] + "..."
		}
		n--
	}
	return s
}
