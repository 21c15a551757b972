package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"strings"
	"testing"

	"github.com/seckill-oss/seckill/internal/keys"
	"github.com/seckill-oss/seckill/internal/testkit/testenv"
)

// reconcile with a SECKILL_KEY_PREFIX that is not the service's (forgotten,
// mistyped) finds no stock for an activity that has orders: it refuses,
// naming the variable, and writes nothing; -force goes on, for a Redis that
// really lost the activity's data.
func TestReconcileRefusesAPrefixWithoutStock(t *testing.T) {
	env := realEnv(t, 0)
	prefix, rdb := env["SECKILL_KEY_PREFIX"], testenv.Redis(t)
	p := start(t, env, "serve")
	base := "http://" + p.addr()
	id := createAndPreload(t, base, map[string]string{"Authorization": "Bearer " + env["SECKILL_ADMIN_TOKEN"]}, 3)
	if code, v := call(t, "POST", fmt.Sprintf("%s/api/v1/activities/%d/orders", base, id), map[string]string{"X-User-ID": "1"}, ""); code != http.StatusCreated {
		t.Fatalf("buy: %d %v", code, v)
	}
	if err := p.stop(); err != nil {
		t.Fatal(err)
	}

	wrong := maps.Clone(env)
	wrong["SECKILL_KEY_PREFIX"] = prefix + "other:"
	t.Cleanup(func() { testenv.DeletePrefix(t, rdb, wrong["SECKILL_KEY_PREFIX"]) })
	reconcile := func(env map[string]string, args ...string) (reconcileOutput, error) {
		var out, stderr bytes.Buffer
		err := run(context.Background(), append([]string{"seckill", "reconcile", "-activity", fmt.Sprint(id)}, args...), func(k string) string { return env[k] }, &out, &stderr)
		var r reconcileOutput
		if err == nil {
			if jerr := json.Unmarshal(out.Bytes(), &r); jerr != nil {
				t.Fatalf("reconcile output %q: %v", out.String(), jerr)
			}
		}
		return r, err
	}

	_, err := reconcile(wrong)
	if err == nil || !strings.Contains(err.Error(), "SECKILL_KEY_PREFIX") || !strings.Contains(err.Error(), "-force") ||
		!strings.Contains(err.Error(), "1 orders") {
		t.Fatalf("reconcile under a prefix without the stock = %v, want a refusal naming SECKILL_KEY_PREFIX and -force", err)
	}
	if n := rdb.Exists(context.Background(), keys.NewSpace(wrong["SECKILL_KEY_PREFIX"]).Stock(id)).Val(); n != 0 {
		t.Fatal("the refused reconcile wrote stock under the wrong prefix")
	}

	// Under the service's prefix the stock is there: reconcile goes on.
	if r, err := reconcile(env); err != nil || r.After != 2 || r.Changed {
		t.Fatalf("reconcile under the service's prefix = %+v, %v; want 2 left, unchanged", r, err)
	}
	// -force: as before the check, the stock is loaded under the prefix given.
	if r, err := reconcile(wrong, "-force"); err != nil || r.Before != nil || r.After != 2 || !r.Changed {
		t.Fatalf("reconcile -force = %+v, %v; want nothing before, 2 after", r, err)
	}
}
