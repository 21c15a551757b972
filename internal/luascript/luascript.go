// Package luascript loads the service's Redis scripts. Each script lives in
// its own .lua file next to the package that runs it, embedded with the
// package (//go:embed *.lua), so the Lua reads as Lua and is reviewed as such.
//
// The scripts that read an activity's stock hash or its waiting room's
// hash load with a prelude (LoadWithPrelude): prelude.lua's shared
// functions (Redis's clock, a hash's fields by name, the keys' retention, a
// deduct's receipt), and the hashes' field names as package keys has them.
package luascript

import (
	_ "embed"
	"fmt"
	"io/fs"
	"regexp"
	"slices"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/seckill-oss/seckill/internal/keys"
)

//go:embed prelude.lua
var preludeLua string

// prelude is prelude.lua without its comment lines: it rides in every
// script that loads it, and a script run with EVAL (a write that WAITs for
// replicas) sends its whole body each time.
var prelude = uncommented(preludeLua)

// fieldRef is a field of the stock hash or the room's hash as a script
// names it, STOCK.<field> or ROOM.<field>, and hashFields the fields each
// has (package keys): the one list Go and Lua read.
var (
	fieldRef   = regexp.MustCompile(`\b(STOCK|ROOM)\.([A-Za-z_][A-Za-z0-9_]*)`)
	hashFields = map[string][]string{"STOCK": keys.StockFields, "ROOM": keys.RoomFields}
)

// Load returns the script in the files names of files, joined in that
// order: a file of shared functions first, then the script that calls them
// (Redis runs one script body; Lua has no include). A name that files does
// not hold is a mistake in the program, not in its input or its
// surroundings: Load panics, at package initialisation, before any request.
func Load(files fs.FS, names ...string) *redis.Script {
	return redis.NewScript(join(files, names))
}

// LoadWithPrelude is Load with the prelude first, for the files to call,
// and each field the files name as STOCK.<field> or ROOM.<field> written
// as the string it is ('remaining'): a constant of the script, so naming a
// field costs a run nothing. A field that package keys does not list is a
// mistake in the program: LoadWithPrelude panics, at package
// initialisation. The script is still one body, run whole and atomically.
func LoadWithPrelude(files fs.FS, names ...string) *redis.Script {
	return redis.NewScript(namedFields(prelude + join(files, names)))
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

// namedFields writes each STOCK.<field> and ROOM.<field> of src as a Lua
// string, and panics on a field that hash does not have.
func namedFields(src string) string {
	return fieldRef.ReplaceAllStringFunc(src, func(ref string) string {
		m := fieldRef.FindStringSubmatch(ref)
		if !slices.Contains(hashFields[m[1]], m[2]) {
			panic(fmt.Sprintf("luascript: %s names a field package keys does not list for that hash", ref))
		}
		return "'" + m[2] + "'"
	})
}

// uncommented is src without its blank lines and its lines of comment only.
func uncommented(src string) string {
	var out strings.Builder
	for line := range strings.Lines(src) {
		if t := strings.TrimSpace(line); t != "" && !strings.HasPrefix(t, "--") {
			out.WriteString(line)
		}
	}
	return out.String()
}
