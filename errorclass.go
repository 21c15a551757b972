package seckill

// Final reports whether e is a final answer that says the caller has no
// order (docs/API.md: sold_out, ended and not_started): asking again
// changes nothing.
func (e *Error) Final() bool {
	return e != nil && (e.Code == ESoldOut || e.Code == EEnded || e.Code == ENotStarted)
}

// Retryable reports whether e says nothing changed and to come back after
// its RetryAfter (busy, unavailable, outcome_unknown): the answers that
// carry Retry-After.
func (e *Error) Retryable() bool {
	return e != nil && (e.Code == EBusy || e.Code == EUnavailable || e.Code == EOutcomeUnknown)
}
