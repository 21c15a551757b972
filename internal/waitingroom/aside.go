package waitingroom

// aside runs fn on a goroutine of its own and waits for it; a panic of
// fn's is raised again here, on the caller's goroutine.
//
// A held request's goroutine keeps the stack it grew to for as long as it
// is held: Go grows a stack by doubling and shrinks it only when a GC
// finds less than a quarter of it in use. The reads around a hold (the
// status script through the Redis client, the precedence walk) go deep
// enough to double it from 8 KB to 16 on the request's own goroutine, for
// the whole hold; run aside, their depth is a short-lived goroutine's
// (loadtest/heldmem measures the difference).
func aside(fn func()) {
	var panicked any
	ran := make(chan struct{})
	go func() {
		defer close(ran)
		defer func() { panicked = recover() }()
		fn()
	}()
	<-ran
	if panicked != nil {
		panic(panicked)
	}
}
