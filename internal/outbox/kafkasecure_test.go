package outbox_test

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/seckill-oss/seckill/internal/order"
	"github.com/seckill-oss/seckill/internal/outbox"
	"github.com/seckill-oss/seckill/internal/testkit/testenv"
)

// The relay over SASL SCRAM and TLS, against kfake (franz-go's in-process
// cluster; no Kafka broker installs here) with both turned on: every event
// arrives, read back by a consumer with the same settings. A wrong
// password, a client without TLS and a client without SASL each fail to
// produce.
//
// Can fail: a sink that drops KafkaSecurity's options never completes a
// TLS handshake, and the outbox stays pending.
func TestKafkaOverSASLAndTLS(t *testing.T) {
	const topic, user, pass = "seckill.orders", "seckill", "scram-test-password"
	caFile, serverTLS := testenv.TLSServer(t)
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(3, topic),
		kfake.EnableSASL(), kfake.Superuser("SCRAM-SHA-256", user, pass), kfake.TLS(serverTLS))
	if err != nil {
		t.Fatal(err)
	}
	defer cluster.Close()
	good := outbox.KafkaSecurity{TLS: true, CAFile: caFile, Mechanism: outbox.SASLScram256, User: user, Password: pass}
	opts, err := good.Opts()
	if err != nil {
		t.Fatal(err)
	}
	sink, err := outbox.NewKafkaSink(cluster.ListenAddrs(), topic, opts...)
	if err != nil {
		t.Fatal(err)
	}
	w := newWorld(t)
	w.sell(t, 6)
	r := outbox.Start(w.store.Outbox, sink, outbox.Config{Poll: 10 * time.Millisecond})
	waitPendingWithin(t, w.store, 0, 30*time.Second)
	_ = r.Close() // closes the sink
	rows, err := w.store.Outbox.EventsOf(context.Background(), w.act.ID)
	if err != nil {
		t.Fatal(err)
	}
	w.checkEvents(t, consumeAll(t, cluster.ListenAddrs(), topic, len(rows), opts...))

	wrongPassword, noTLS, noSASL := good, good, good
	wrongPassword.Password = "not-" + pass
	noTLS.TLS, noTLS.CAFile = false, ""
	noSASL.Mechanism, noSASL.User, noSASL.Password = "", "", ""
	for name, sec := range map[string]outbox.KafkaSecurity{"wrong password": wrongPassword, "no TLS": noTLS, "no SASL": noSASL} {
		if err := sendOne(t, cluster.ListenAddrs(), topic, sec); err == nil {
			t.Errorf("%s: the broker took the event", name)
		} else {
			t.Logf("%s: %v", name, err)
		}
	}
}

// sendOne sends one event with sec, giving up after 3 s.
func sendOne(t *testing.T, brokers []string, topic string, sec outbox.KafkaSecurity) error {
	t.Helper()
	opts, err := sec.Opts()
	if err != nil {
		t.Fatal(err)
	}
	sink, err := outbox.NewKafkaSink(brokers, topic, opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	return sink.Send(ctx, []order.Event{{ID: "e1", OrderID: "o1", Payload: []byte(`{}`)}})
}
