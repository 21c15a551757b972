package seckill

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// ValidateName reports, as an EInvalid *Error, a name the contract does not
// allow an activity: one ValidText refuses at MaxActivityName characters.
func ValidateName(name string) error {
	if !ValidText(name, MaxActivityName) {
		return Errorf(EInvalid, "name must be a string of 1 to %d characters, not blank, without control characters", MaxActivityName)
	}
	return nil
}

// ValidText reports whether s may be shown back to people as a name: 1 to
// most characters of valid UTF-8, not blank, without control characters.
func ValidText(s string, most int) bool {
	if n := utf8.RuneCountInString(s); n < 1 || n > most || !utf8.ValidString(s) || strings.TrimSpace(s) == "" {
		return false
	}
	return strings.IndexFunc(s, unicode.IsControl) < 0
}
