package luascript_test

import (
	"testing"
	"testing/fstest"

	"github.com/redis/go-redis/v9"

	"github.com/seckill-oss/seckill/internal/luascript"
)

func TestLoad(t *testing.T) {
	files := fstest.MapFS{"one.lua": {Data: []byte("return 1")}}
	if s := luascript.Load(files, "one.lua"); s.Hash() == "" {
		t.Error("no script")
	}
	// Joined files: the shared head first, then the script.
	files["head.lua"] = &fstest.MapFile{Data: []byte("local function one() return 1 end")}
	files["call.lua"] = &fstest.MapFile{Data: []byte("return one()")}
	if got, want := luascript.Load(files, "head.lua", "call.lua").Hash(), redis.NewScript("local function one() return 1 end\nreturn one()\n").Hash(); got != want {
		t.Errorf("joined script's hash %s, want %s", got, want)
	}
	defer func() {
		if recover() == nil {
			t.Error("a missing file did not panic")
		}
	}()
	luascript.Load(files, "two.lua")
}
