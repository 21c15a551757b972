package chaos

import (
	"context"
	"database/sql"
	"sort"
	"time"
)

// fenceEvery is how often the fence watch reads the activities' fences: a
// fence set back stays back for as many grants as it went back, a few
// seconds at the campaign's pace.
const fenceEvery = 250 * time.Millisecond

// fenceWatch reads every activity's fence in the database all through the
// campaign. The fence is the newest lock grant the database accepted a
// write under; each claim moves it forward, and a grant whose fence is not
// past it is refused (order/group.go claimGroup). A Redis failover that lost
// the fence counter's last INCRs hands out fences the database has seen
// already: without that refusal their claims would set the fence back, and a
// holder of a lease long expired, whose fence is past the lowered one, could
// then write too. The final state cannot show it: the fence moves forward
// again with the next grants.
type fenceWatch struct {
	db      *sql.DB
	highest map[int64]fenceRead
	back    map[int64]fenceBack // the first time each activity's went back
	reads   int
}

type fenceRead struct {
	fence int64
	at    time.Time
}

// fenceBack is a read of an activity's fence below one read before.
type fenceBack struct {
	activity int64
	from, to fenceRead
}

func newFenceWatch(db *sql.DB) *fenceWatch {
	return &fenceWatch{db: db, highest: map[int64]fenceRead{}, back: map[int64]fenceBack{}}
}

// read reads the fences once; a read that fails (a Galera node down, the
// database slow) is skipped.
func (fw *fenceWatch) read(ctx context.Context) {
	rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	rows, err := fw.db.QueryContext(rctx, "SELECT id, fence FROM activities")
	if err != nil {
		return
	}
	defer rows.Close()
	now := time.Now()
	for rows.Next() {
		var id, fence int64
		if err := rows.Scan(&id, &fence); err != nil {
			return
		}
		fw.account(id, fenceRead{fence, now})
	}
	if rows.Err() == nil {
		fw.reads++
	}
}

func (fw *fenceWatch) account(id int64, r fenceRead) {
	high, ok := fw.highest[id]
	switch {
	case !ok || r.fence > high.fence:
		fw.highest[id] = r
	case r.fence < high.fence:
		if _, reported := fw.back[id]; !reported {
			fw.back[id] = fenceBack{activity: id, from: high, to: r}
		}
	}
}

// wentBack returns the activities whose fence went back, in activity order.
func (fw *fenceWatch) wentBack() []fenceBack {
	out := make([]fenceBack, 0, len(fw.back))
	for _, b := range fw.back {
		out = append(out, b)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].activity < out[j].activity })
	return out
}
