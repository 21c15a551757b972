package httpapi

import (
	"testing"

	"github.com/seckill-oss/seckill/internal/testkit/jsoncheck"
)

// Every answer that writes its own JSON writes what encoding/json writes.
func TestAnswersWriteWhatEncodingJSONWrites(t *testing.T) {
	jsoncheck.Check(t, orderResponse.appendJSON)
	jsoncheck.Check(t, errorBody.appendJSON)
	jsoncheck.Check(t, errorDetail.appendJSON)
	jsoncheck.Check(t, statusResponse.appendJSON)
	jsoncheck.Check(t, queueResponse.appendJSON)
}

// encodeAnswer writes a hot shape and any other value alike: what
// encoding/json writes. Can fail: the fallback losing HTML escaping's
// setting or keeping the newline.
func TestEncodeAnswerIsEncodingJSON(t *testing.T) {
	for _, v := range []any{orderResponse{OrderID: "o<1>", ActivityID: 3, UserID: 42, Status: "created", CreatedAt: "2026-11-27T10:00:00Z"},
		statusResponse{Status: "ok"}, map[string]any{"b": []int{1, 2}, "a": "<x>"}} {
		b, err := encodeAnswer(nil, v)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := string(b), jsoncheck.Standard(t, v); got != want {
			t.Errorf("%T: got %s, want %s", v, got, want)
		}
	}
}
