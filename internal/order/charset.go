package order

import (
	"errors"
	"fmt"
	"strings"

	"github.com/go-sql-driver/mysql"
)

// ErrUnsafeCharset refuses a MySQL DSN whose connection charset is not
// utf8mb4 or utf8. The store interpolates arguments into its statements on
// the client (InterpolateParams: one round trip a statement, which the group
// commit's multi-row inserts rely on), escaping a quote as \'. In big5,
// gbk, gb18030, sjis or cp932 the byte 0x5c can be the second half of a
// character, so the server reads "\xbf\'" as one character and a quote: an
// activity's name would close its string literal and run as SQL. utf8 never
// uses 0x5c inside a multibyte character. latin1, ascii and binary are just
// as safe from that, but are refused too: names are Unicode, and the schema
// stores them as utf8mb4, so any other charset corrupts them.
var ErrUnsafeCharset = errors.New("the connection charset must be utf8mb4 or utf8: arguments are interpolated on the client, and another charset can turn an escaped quote into a real one")

// safeCharsets are the connection charsets interpolation escapes safely.
var safeCharsets = map[string]bool{"utf8mb4": true, "utf8": true, "utf8mb3": true}

// charsetParams are the DSN parameters that set how the server decodes the
// statement's bytes: the driver sends a parameter it does not know as
// SET name=value.
var charsetParams = []string{"character_set_client", "character_set_connection", "collation_connection"}

// CheckCharset returns ErrUnsafeCharset, naming the parameter and its
// value, when a MySQL DSN asks for a connection charset other than utf8mb4
// or utf8: in its charset parameter (every entry of a comma list, since the
// driver falls back to the next), its collation, or the session variables
// above. nil for a DSN that sets none (the driver's default is utf8mb4).
func CheckCharset(dsn string) error {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return fmt.Errorf("order: not a go-sql-driver/mysql DSN: %w", err)
	}
	check := func(param, value string) error {
		cs, _, _ := strings.Cut(strings.ToLower(strings.Trim(value, "'\"` ")), "_")
		if safeCharsets[cs] || value == "" {
			return nil
		}
		return fmt.Errorf("DSN parameter %s=%s: %w", param, value, ErrUnsafeCharset)
	}
	for _, cs := range strings.Split(dsnParam(dsn, "charset"), ",") {
		if err := check("charset", cs); err != nil {
			return err
		}
	}
	if err := check("collation", cfg.Collation); err != nil {
		return err
	}
	for _, p := range charsetParams {
		if err := check(p, cfg.Params[p]); err != nil {
			return err
		}
	}
	return nil
}

// dsnParam is the raw value of a DSN parameter, found as the driver finds
// it (the parameters follow the first '?' after the last '/'): the driver
// keeps the charset list to itself.
func dsnParam(dsn, name string) string {
	_, query, _ := strings.Cut(dsn[strings.LastIndexByte(dsn, '/')+1:], "?")
	value := ""
	for _, kv := range strings.Split(query, "&") {
		if k, v, ok := strings.Cut(kv, "="); ok && k == name {
			value = v // the driver keeps the last
		}
	}
	return value
}
