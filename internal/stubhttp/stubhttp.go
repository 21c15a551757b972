// Package stubhttp writes the JSON answers of the stand-in services (the
// user-check and payment-provider stubs, the fault proxy's control API),
// in the error shape of docs/API.md.
package stubhttp

import (
	"encoding/json"
	"net/http"
)

// WriteJSON answers status with v as JSON.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v) // the client may be gone; nothing to do about it
}

// WriteError answers status with {"error": {"code": code, "message": msg}}.
func WriteError(w http.ResponseWriter, status int, code, msg string) {
	WriteJSON(w, status, map[string]any{"error": map[string]string{"code": code, "message": msg}})
}

// Handle adds the routes every stub has to mux: its configuration, read
// (GET /stub/config) and changed (PUT /stub/config) at run time, and a
// health check (GET /healthz).
func Handle(mux *http.ServeMux, getConfig, putConfig http.HandlerFunc) {
	mux.HandleFunc("GET /stub/config", getConfig)
	mux.HandleFunc("PUT /stub/config", putConfig)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		WriteJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
}
