package keys

// The fields of an activity's two shared hashes, named once for Go and
// Lua: a script names a field STOCK.<field> or ROOM.<field>, which
// internal/luascript checks against StockFields and RoomFields and writes
// in as the string when the script loads, so a script of one package reads
// the other's hash by these names, never by a spelling of its own. A
// script reads a field's value by the same name (room.ends), so each stays
// a Lua identifier.

// Fields of the stock hash (Stock).
const (
	StockRemaining = "remaining" // units left
	StockEpoch     = "epoch"     // the load's epoch, stamped on every receipt
	StockLoaded    = "loaded"    // what the epoch's load put in: the ledger's start
	StockPaused    = "paused"    // since when ops paused the sale, unix ms
	StockEnded     = "ended"     // "1" once ops ended the sale
)

// StockFields lists the stock hash's fields.
var StockFields = []string{StockRemaining, StockEpoch, StockLoaded, StockPaused, StockEnded}

// Fields of a waiting room's hash (WaitingRoom).
const (
	RoomOn = "on" // "1" while the activity has a room, "0" once turned off
	// The room's window, unix ms.
	RoomOpens  = "opens"
	RoomStarts = "starts"
	RoomEnds   = "ends"

	RoomSeed     = "seed"      // orders the pre-queue
	RoomSeq      = "seq"       // arrivals after the start, counted
	RoomClosed   = "closed"    // why the room closed: "ended" or "sold_out"
	RoomHold     = "hold"      // units one admission holds
	RoomAdmitted = "admitted"  // admissions ever given
	RoomLapsed   = "lapsed"    // admissions ever lapsed
	RoomUsed     = "used"      // admissions ever used up by an order
	RoomNotes    = "notes"     // notes ever written (note.lua)
	RoomTokens   = "tokens"    // the pace's token bucket
	RoomLast     = "last"      // the last step, unix ms
	RoomRate     = "rate"      // measured admissions a second
	RoomPace     = "pace"      // admissions a second the last step allowed
	RoomUsedSeen = "used_seen" // used, as the last step saw it
	RoomUsedRate = "used_rate" // measured admissions used up a second
)

// RoomFields lists the room hash's fields.
var RoomFields = []string{RoomOn, RoomOpens, RoomStarts, RoomEnds, RoomSeed, RoomSeq, RoomClosed, RoomHold,
	RoomAdmitted, RoomLapsed, RoomUsed, RoomNotes, RoomTokens, RoomLast, RoomRate, RoomPace, RoomUsedSeen, RoomUsedRate}
