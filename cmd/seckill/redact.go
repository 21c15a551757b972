package main

import (
	"net/url"

	"github.com/seckill-oss/seckill/internal/outbound"
)

// redactedURL is raw as it may be logged: scheme, host and path only
// (outbound.Loggable), or a placeholder when it does not parse (the
// parser's error would quote it whole).
func redactedURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	return outbound.Loggable(u)
}
