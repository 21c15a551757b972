// Package luascript loads the service's Redis scripts. Each script lives in
// its own .lua file next to the package that runs it, embedded with the
// package (//go:embed *.lua), so the Lua reads as Lua and is reviewed as such.
//
// The scripts that read an activity's stock hash or its waiting room's hash
// load with a prelude (LoadWithPrelude): the tables STOCK and ROOM, written
// here from package keys's field names, so Go and Lua spell each field in
// one place, and prelude.lua's shared functions (Redis's clock, the keys'
// retention, a deduct's receipt, a hash's fields by name).
package luascript

import (
	_ "embed"
	"fmt"
	"io/fs"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/seckill-oss/seckill/internal/keys"
)

//go:embed prelude.lua
var preludeLua string

// prelude is the head LoadWithPrelude puts before a script.
var prelude = fieldTable("STOCK", keys.StockFields) + fieldTable("ROOM", keys.RoomFields) + preludeLua

// fieldTable is a Lua table of the hash's fields, each under its own name:
// local NAME = {remaining = 'remaining', ...}.
func fieldTable(name string, fields []string) string {
	entries := make([]string, len(fields))
	for i, f := range fields {
		entries[i] = f + " = '" + f + "'"
	}
	return "local " + name + " = {" + strings.Join(entries, ", ") + "}\n"
}

// Load returns the script in the files names of files, joined in that
// order: a file of shared functions first, then the script that calls them
// (Redis runs one script body; Lua has no include). A name that files does
// not hold is a mistake in the program, not in its input or its
// surroundings: Load panics, at package initialisation, before any request.
func Load(files fs.FS, names ...string) *redis.Script {
	return redis.NewScript(join(files, names))
}

// LoadWithPrelude is Load with the prelude first: the tables STOCK and
// ROOM and prelude.lua's functions, for the files to call. The script is
// still one body, run whole and atomically as before.
func LoadWithPrelude(files fs.FS, names ...string) *redis.Script {
	return redis.NewScript(prelude + join(files, names))
}

func join(files fs.FS, names []string) string {
	var src strings.Builder
	for _, name := range names {
		b, err := fs.ReadFile(files, name)
		if err != nil {
			panic(fmt.Sprintf("luascript: %v", err))
		}
		src.Write(b)
		src.WriteByte('\n')
	}
	return src.String()
}
