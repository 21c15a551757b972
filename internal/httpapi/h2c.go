package httpapi

import (
	"fmt"
	"net/http"

	"golang.org/x/net/http2"
)

// ServeH2C has srv speak HTTP/2 without TLS (prior knowledge) beside
// HTTP/1.1: a gateway's multiplexed upstream, whose held long polls then
// share its few connections instead of holding an open file each.
//
// The streams are served by golang.org/x/net's HTTP/2 server with its
// random write scheduler. net/http's own server writes each frame after a
// walk over every open stream of the connection (its round-robin
// scheduler), held ones too: a tenth of an instance's CPU at a draw with
// 250 streams a connection. The random scheduler looks only at the streams
// with something to write.
func ServeH2C(srv *http.Server) error {
	var p http.Protocols
	p.SetHTTP1(true)
	p.SetUnencryptedHTTP2(true)
	srv.Protocols = &p
	// Deprecated for Protocols, which cannot choose the write scheduler. From
	// Go 1.27 x/net wraps net/http's own server and may not honour it: then
	// the streams are served as by net/http, slower at a draw, no less right.
	//nolint:staticcheck // SA1019: the only way to the write scheduler
	if err := http2.ConfigureServer(srv, &http2.Server{NewWriteScheduler: http2.NewRandomWriteScheduler}); err != nil {
		return fmt.Errorf("httpapi: HTTP/2 without TLS: %w", err)
	}
	return nil
}
