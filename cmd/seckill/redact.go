package main

import "net/url"

// redactedURL is raw as it may be logged: with a password in it shown as
// xxxxx (url.URL.Redacted), or a placeholder when it does not parse (the
// parser's error would quote it whole).
func redactedURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}
