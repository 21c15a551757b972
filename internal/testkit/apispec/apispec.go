// Package apispec checks HTTP answers against the service's OpenAPI
// document (docs/openapi.yaml), so the document cannot drift from the code:
// the HTTP tests and the end-to-end tests run every answer they receive
// through a Validator.
//
// It is a test aid: only tests import it, so the validator library stays out
// of the service binary.
package apispec

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"github.com/seckill-oss/seckill/docs"
)

// Validator checks answers against one OpenAPI document. It is safe for
// concurrent use.
type Validator struct {
	doc    *openapi3.T
	router routers.Router

	// passed remembers answers that matched, less their X-Request-ID, which
	// is the only part that differs between the thousands of identical
	// "busy" or "sold_out" answers of a sale. The library compiles every
	// schema it checks (BenchmarkCheck: about 0.5 ms of CPU an answer), and
	// the e2e tests check every answer on the cores the service runs on.
	// An answer is taken from here only when its X-Request-ID is valid by
	// the document's own pattern; anything else is checked in full.
	passed    sync.Map // answerKey -> struct{}
	npassed   atomic.Int64
	requestID *regexp.Regexp // nil: nothing is remembered
}

// maxPassed bounds what Validator remembers.
const maxPassed = 10_000

// New loads and validates an OpenAPI document.
func New(spec []byte) (*Validator, error) {
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(spec)
	if err != nil {
		return nil, fmt.Errorf("apispec: load: %w", err)
	}
	if err := doc.Validate(loader.Context); err != nil {
		return nil, fmt.Errorf("apispec: the document is not valid OpenAPI: %w", err)
	}
	// pprof's index (admin listener) is HTML; kin-openapi decodes only
	// JSON-like and plain bodies by default. The schema is a string.
	htmlOnce.Do(func() { openapi3filter.RegisterBodyDecoder("text/html", openapi3filter.PlainBodyDecoder) })
	// The document's servers say where a deployment answers (the demo's
	// loopback address); an answer is checked by its path and method
	// whatever host served it, as the tests' servers listen elsewhere.
	routed := *doc
	routed.Servers = nil
	router, err := gorillamux.NewRouter(&routed)
	if err != nil {
		return nil, fmt.Errorf("apispec: routes: %w", err)
	}
	v := &Validator{doc: doc, router: router}
	if h := doc.Components.Headers["X-Request-ID"]; h != nil && h.Value != nil && h.Value.Required &&
		h.Value.Schema != nil && h.Value.Schema.Value != nil && h.Value.Schema.Value.Pattern != "" {
		if v.requestID, err = regexp.Compile(h.Value.Schema.Value.Pattern); err != nil {
			return nil, fmt.Errorf("apispec: X-Request-ID pattern: %w", err)
		}
	}
	return v, nil
}

var htmlOnce sync.Once

var (
	serviceOnce sync.Once
	service     *Validator
	serviceErr  error
)

// Service is the Validator of docs/openapi.yaml, loaded once.
func Service() (*Validator, error) {
	serviceOnce.Do(func() { service, serviceErr = New(docs.OpenAPI) })
	return service, serviceErr
}

// HasOperation reports whether the document describes method on path, a
// path template in OpenAPI form ("/api/v1/activities/{id}").
func (v *Validator) HasOperation(method, path string) bool {
	item := v.doc.Paths.Value(path)
	return item != nil && item.GetOperation(method) != nil
}

// Check reports how an answer to req breaks the document: a status the
// operation does not list, a missing or malformed header, a body that does
// not match its schema. A request no route of the document serves must be
// answered with the contract's error body: 405 with Allow when the path
// exists, else 404 (or 400/413, which the service may answer before routing).
func (v *Validator) Check(req *http.Request, status int, header http.Header, body []byte) error {
	route, params, err := v.findRoute(req)
	switch {
	case errors.Is(err, routers.ErrMethodNotAllowed):
		return v.checkUnrouted(req, status, header, body, http.StatusMethodNotAllowed, "MethodNotAllowed")
	case errors.Is(err, routers.ErrPathNotFound):
		return v.checkUnrouted(req, status, header, body, http.StatusNotFound, "NotFound")
	case err != nil:
		return fmt.Errorf("apispec: %s %s: find route: %w", req.Method, req.URL.Path, err)
	}
	key, remember := v.answerKey(req.Method, route.Path, status, header, body)
	if _, ok := v.passed.Load(key); ok && remember {
		return nil
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route},
		Status:                 status,
		Header:                 header,
		Options:                &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	}
	in.SetBodyBytes(body)
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		return fmt.Errorf("apispec: %s %s answered %d %s: %s", req.Method, req.URL.Path, status, truncate(body), brief(err))
	}
	if remember && v.npassed.Load() < maxPassed {
		if _, loaded := v.passed.LoadOrStore(key, struct{}{}); !loaded {
			v.npassed.Add(1)
		}
	}
	return nil
}

// answerKey is what identifies an answer to an operation apart from its
// X-Request-ID; remember is false unless that header is one value matching
// the document's pattern, so an answer with a bad one is always checked.
func (v *Validator) answerKey(method, path string, status int, header http.Header, body []byte) (key string, remember bool) {
	ids := header.Values("X-Request-ID")
	if v.requestID == nil || len(ids) != 1 || !v.requestID.MatchString(ids[0]) {
		return "", false
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s %d\n", method, path, status)
	names := make([]string, 0, len(header))
	for name := range header {
		switch name {
		case "X-Request-Id", "Date", "Content-Length":
		default:
			names = append(names, name)
		}
	}
	slices.Sort(names)
	for _, name := range names {
		fmt.Fprintf(&b, "%s: %q\n", name, header[name])
	}
	b.Write(body)
	return b.String(), true
}

// findRoute finds the operation req asks for. gin matches an empty path
// parameter ("/api/v1/activities//orders") where an OpenAPI template does
// not; such a request is looked up with a placeholder in the empty segment,
// so its answer is checked as the invalid id it is.
func (v *Validator) findRoute(req *http.Request) (*routers.Route, map[string]string, error) {
	route, params, err := v.router.FindRoute(req)
	if !errors.Is(err, routers.ErrPathNotFound) || !strings.Contains(req.URL.Path, "//") {
		return route, params, err
	}
	alt := req.Clone(req.Context())
	alt.URL.Path = strings.ReplaceAll(req.URL.Path, "//", "/-/")
	alt.URL.RawPath = ""
	return v.router.FindRoute(alt)
}

// checkUnrouted checks the answer to a request outside the document against
// the named shared response, or any contract error for 400 and 413.
func (v *Validator) checkUnrouted(req *http.Request, status int, header http.Header, body []byte, want int, response string) error {
	name := response
	admin := req.URL.Path == "/admin" || strings.HasPrefix(req.URL.Path, "/admin/") ||
		req.URL.Path == "/debug/pprof" || strings.HasPrefix(req.URL.Path, "/debug/pprof/")
	switch {
	case status == want:
	// Everything under /admin/ (and /debug/pprof/ on the admin listener)
	// asks for the token before it says whether
	// the route exists, so the ops API cannot be mapped without it.
	case admin && status == http.StatusUnauthorized:
		name = "AdminUnauthenticated"
	case admin && status == http.StatusForbidden:
		name = "AdminDisabled"
	case admin && status == http.StatusTooManyRequests: // the admin failure limit
		name = "AdminLimited"
	case status == http.StatusBadRequest:
		name = "InvalidRequest"
	case status == http.StatusRequestEntityTooLarge:
		name = "TooLarge"
	default:
		return fmt.Errorf("apispec: %s %s is outside the document and was answered %d, want %d: %s",
			req.Method, req.URL.Path, status, want, truncate(body))
	}
	ref := v.doc.Components.Responses[name]
	if ref == nil || ref.Value == nil {
		return fmt.Errorf("apispec: the document has no components.responses.%s", name)
	}
	// A synthetic operation answering only that response lets the library
	// check it like any other.
	op := openapi3.NewOperation()
	op.Responses = openapi3.NewResponses(openapi3.WithStatus(status, ref))
	route := &routers.Route{Spec: v.doc, Path: req.URL.Path, Method: req.Method, Operation: op}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, Route: route},
		Status:                 status,
		Header:                 header,
		Options:                &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	}
	in.SetBodyBytes(body)
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		return fmt.Errorf("apispec: %s %s (outside the document) answered %d %s: %s", req.Method, req.URL.Path, status, truncate(body), brief(err))
	}
	return nil
}

// Transport returns a RoundTripper that sends requests through next (nil:
// http.DefaultTransport) and passes every answer's violation of the document
// to report. The answer reaches the caller unchanged; transport errors are
// returned as they are, unchecked.
func (v *Validator) Transport(next http.RoundTripper, report func(error)) http.RoundTripper {
	if next == nil {
		next = http.DefaultTransport
	}
	return &checkingTransport{v: v, next: next, report: report}
}

type checkingTransport struct {
	v      *Validator
	next   http.RoundTripper
	report func(error)
}

// RoundTrip implements http.RoundTripper.
func (t *checkingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	res, err := t.next.RoundTrip(req)
	if err != nil {
		return res, err
	}
	body, err := io.ReadAll(res.Body)
	_ = res.Body.Close()
	res.Body = io.NopCloser(bytes.NewReader(body))
	if err != nil {
		// A connection cut mid-body: the caller sees the same failure.
		res.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), errReader{err}))
		return res, nil //nolint:nilerr // the error is in the body, where the real transport puts it
	}
	if err := t.v.Check(req, res.StatusCode, res.Header, body); err != nil {
		t.report(err)
	}
	return res, nil
}

// CloseIdleConnections closes next's idle connections, so
// http.Client.CloseIdleConnections still reaches them.
func (t *checkingTransport) CloseIdleConnections() {
	if c, ok := t.next.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

// truncate keeps error messages readable when a body is large.
func truncate(body []byte) string {
	return shorten(strings.TrimSpace(string(body)), 300)
}

// brief is a validation error without the schema and value dumps the
// library appends to each of its messages.
func brief(err error) string {
	var lines []string
	for _, l := range strings.Split(err.Error(), "\n") {
		if l == "Schema:" || l == "Value:" {
			break
		}
		lines = append(lines, l)
	}
	return shorten(strings.Join(lines, " "), 1000)
}

func shorten(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}
