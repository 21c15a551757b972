package luascript_test

import (
	"testing"
	"testing/fstest"

	"github.com/seckill-oss/seckill/internal/luascript"
)

func TestLoad(t *testing.T) {
	files := fstest.MapFS{"one.lua": {Data: []byte("return 1")}}
	if s := luascript.Load(files, "one.lua"); s.Hash() == "" {
		t.Error("no script")
	}
	defer func() {
		if recover() == nil {
			t.Error("a missing file did not panic")
		}
	}()
	luascript.Load(files, "two.lua")
}
