// Package outbound is what the service's clients of other services (the
// user check, the payment provider) share: a base URL read without ever
// showing its password, a pooled transport with short dials that carries
// the trace context and never follows a redirect, and a GET whose answer is
// read up to a limit.
package outbound

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/seckill-oss/seckill/internal/tracing"
)

// ParseBase reads a service's base URL, http(s)://host[:port][/path]. Its
// errors show the URL as Loggable does, or not at all when it does not
// parse.
func ParseBase(raw string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimRight(raw, "/"))
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // without the text, which may hold a password
		}
		return nil, fmt.Errorf("base URL: %w", err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("base URL %q: want http(s)://host[:port][/path]", Loggable(u))
	}
	return u, nil
}

// Loggable is u as it may be logged or shown in an error: scheme, host and
// path only. A user name, a password and a query may hold credentials (an
// API key, a token as the user name) and are never shown.
func Loggable(u *url.URL) string {
	return (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}).String()
}

// Client returns an HTTP client for one service, keeping up to idle
// connections to it, that sends the trace context and request id
// (tracing.Transport).
//
// It does not follow redirects: a 3xx is returned as the answer, which the
// callers treat as any unexpected status (a failure, "unknown"). Following
// one would send the request, with its API key header, and trust the answer
// of whatever host the redirect names.
func Client(idle int) *http.Client {
	return &http.Client{CheckRedirect: noRedirects, Transport: tracing.Transport(&http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:          idle,
		MaxIdleConnsPerHost:   idle,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   2 * time.Second,
		ExpectContinueTimeout: time.Second,
	})}
}

// noRedirects is an http.Client's CheckRedirect that returns the 3xx itself.
func noRedirects(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// Get asks u for JSON with c, adding header, and returns the answer's status
// and body. A 200 body longer than limit is an error; other bodies are cut
// at limit+1 bytes. Errors show u as Loggable does (the http.Client
// redacts only a password).
func Get(ctx context.Context, c *http.Client, u *url.URL, header http.Header, limit int) (status int, body []byte, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			ue.URL = Loggable(u)
		}
		return 0, nil, err
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			ue.URL = Loggable(u)
		}
		return 0, nil, err
	}
	defer resp.Body.Close()
	// One byte over the limit tells a huge answer from one that just fits.
	body, err = io.ReadAll(io.LimitReader(resp.Body, int64(limit)+1))
	if err != nil {
		return resp.StatusCode, nil, fmt.Errorf("reading answer: %w", err)
	}
	if resp.StatusCode == http.StatusOK && len(body) > limit {
		return resp.StatusCode, nil, fmt.Errorf("answer larger than %d bytes", limit)
	}
	return resp.StatusCode, body, nil
}
