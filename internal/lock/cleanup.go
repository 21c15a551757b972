package lock

import (
	"context"
	"time"
)

// cleanUp deletes owner's lock at key in the background, retrying until an
// attempt gets an answer, until the lock has expired anyway (at until), or
// until Close.
func (c *Client) cleanUp(key, owner string, until time.Time) {
	c.startCleanUp(key, owner, until, false)
}

// cleanUpLateAcquire deletes owner's lock at key in the background whenever
// it finds it during the next ttl: an acquire that failed on the client can
// land at any moment after, and holds the key for ttl from then. Later
// landings are not covered; go-redis resends and TCP retransmits come within
// a TTL.
func (c *Client) cleanUpLateAcquire(key, owner string, ttl time.Duration) {
	c.startCleanUp(key, owner, time.Now().Add(ttl), true)
}

func (c *Client) startCleanUp(key, owner string, until time.Time, watch bool) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		c.observer.CleanedUp(c.cleanUpUntil(key, owner, time.Time{}, watch))
		return
	}
	c.cleanups.Add(1)
	c.mu.Unlock()
	go func() {
		defer c.cleanups.Done()
		c.observer.CleanedUp(c.cleanUpUntil(key, owner, until, watch))
	}()
}

// cleanUpUntil runs compare-and-delete for owner's lock at key until an
// attempt gets an answer or until passes. With watch, it goes on until
// until whatever the answers, as the lock may appear later; its result is
// then "released" if any attempt deleted the lock.
func (c *Client) cleanUpUntil(key, owner string, until time.Time, watch bool) string {
	result := ""
	for backoff := minBackoff; ; backoff = min(2*backoff, maxCleanupWait) {
		res, err := c.release(context.Background(), key, owner)
		if err == nil && result != "released" {
			result = releaseResult(res)
		}
		if err == nil && !watch {
			return result
		}
		if !time.Now().Before(until) {
			if result == "" {
				return "expired"
			}
			return result
		}
		select {
		case <-c.closing:
			if result == "" {
				return "abandoned" // the key expires by its TTL
			}
			return result
		default:
		}
		select {
		case <-c.closing: // one last attempt
		case <-time.After(jitter(backoff)):
		}
	}
}
