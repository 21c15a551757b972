package usercheck_test

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"time"

	"github.com/seckill-oss/seckill/internal/usercheck"
)

func Example() {
	// The stub plays the verification service: user 2 may not buy.
	stub, err := usercheck.NewStub(usercheck.StubConfig{RejectUsers: []int64{2}})
	if err != nil {
		fmt.Println(err)
		return
	}
	srv := httptest.NewServer(stub)
	defer srv.Close()

	users := usercheck.New(usercheck.Config{BaseURL: srv.URL, Timeout: 200 * time.Millisecond})
	defer users.Close()

	for _, userID := range []int64{1, 2} {
		err := users.Verify(context.Background(), userID, 7)
		switch {
		case err == nil:
			fmt.Println(userID, "may buy")
		case errors.Is(err, usercheck.ErrRejected):
			var rejected *usercheck.RejectedError
			errors.As(err, &rejected)
			fmt.Println(userID, "rejected:", rejected.Reason)
		default: // ErrUnavailable: sell nothing, answer 503
			fmt.Println(userID, "unavailable:", err)
		}
	}

	// Take the service down at run time: failures now open the breaker.
	if err := stub.SetConfig(usercheck.StubConfig{FailRate: 1}); err != nil {
		fmt.Println(err)
		return
	}
	for range usercheck.DefaultConsecutiveFailures {
		users.Verify(context.Background(), 1, 7)
	}
	fmt.Println("breaker:", users.State())
	// Output:
	// 1 may buy
	// 2 rejected: stub: configured rejection
	// breaker: open
}
