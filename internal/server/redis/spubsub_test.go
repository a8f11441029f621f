package redis

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/minikv/minikv/internal/cluster"
	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/store"
)

// TestShardedPubsubDelivery: SPUBLISH reaches the shard channel's
// subscribers on other connections, in RESP2 and RESP3, and nobody
// subscribed to the plain channel or a pattern; CLIENT LIST and INFO
// count shard subscriptions (pubsub_diff_test.go compares the rest with
// redis-server).
func TestShardedPubsubDelivery(t *testing.T) {
	rs := startRESP(t, server.Config{}, store.Config{})
	s2, s3, plain, pub := dialRESP(t, rs.respAddr), dialRESP(t, rs.respAddr), dialRESP(t, rs.respAddr), dialRESP(t, rs.respAddr)
	s2.Expect(multibulk("SSUBSCRIBE", "orders", "other"), "*3\r\n$10\r\nssubscribe\r\n$6\r\norders\r\n:1\r\n", "*3\r\n$10\r\nssubscribe\r\n$5\r\nother\r\n:2\r\n")
	s3.Do("HELLO", "3")
	s3.Expect(multibulk("SSUBSCRIBE", "orders"), ">3\r\n$10\r\nssubscribe\r\n$6\r\norders\r\n:1\r\n")
	plain.Expect(multibulk("SUBSCRIBE", "orders"), "*3\r\n$9\r\nsubscribe\r\n$6\r\norders\r\n:1\r\n")
	plain.Expect(multibulk("PSUBSCRIBE", "ord*"), "*3\r\n$10\r\npsubscribe\r\n$4\r\nord*\r\n:2\r\n")

	pub.Expect(multibulk("SPUBLISH", "orders", "o1"), ":2\r\n")
	pub.Expect(multibulk("PUBLISH", "orders", "p1"), ":2\r\n")
	pub.Expect(multibulk("SPUBLISH", "nobody", "x"), ":0\r\n")
	s2.Expect("", "*3\r\n$8\r\nsmessage\r\n$6\r\norders\r\n$2\r\no1\r\n")
	s3.Expect("", ">3\r\n$8\r\nsmessage\r\n$6\r\norders\r\n$2\r\no1\r\n")
	plain.Expect("", "*3\r\n$7\r\nmessage\r\n$6\r\norders\r\n$2\r\np1\r\n", "*4\r\n$8\r\npmessage\r\n$4\r\nord*\r\n$6\r\norders\r\n$2\r\np1\r\n")
	// No smessage reached the plain subscriber, nor a message the shard
	// ones: each next reads what follows.
	s2.Expect(multibulk("PING"), "*2\r\n$4\r\npong\r\n$0\r\n\r\n")
	plain.Expect(multibulk("PING"), "*2\r\n$4\r\npong\r\n$0\r\n\r\n")

	if got := pub.Do("INFO", "stats"); !strings.Contains(got, "\r\npubsubshard_channels:2\r\n") || !strings.Contains(got, "\r\npubsub_channels:1\r\n") {
		t.Errorf("INFO stats pub/sub counts:\n%s", got)
	}
	list := pub.Do("CLIENT", "LIST")
	if !strings.Contains(list, " flags=P db=0 sub=0 psub=0 ssub=2 ") || !strings.Contains(list, " flags=P db=0 sub=1 psub=1 ssub=0 ") {
		t.Errorf("CLIENT LIST does not count the shard subscriptions:\n%s", list)
	}
	s2.Expect(multibulk("SUNSUBSCRIBE", "orders"), "*3\r\n$12\r\nsunsubscribe\r\n$6\r\norders\r\n:1\r\n")
	pub.Expect(multibulk("PUBSUB", "SHARDNUMSUB", "orders", "other"), "*4\r\n$6\r\norders\r\n:1\r\n$5\r\nother\r\n:1\r\n")
	s2.Conn.Close() // leaving by closing drops its shard channels too
	for pub.Do("PUBSUB", "SHARDNUMSUB", "other") != "*2\r\n$5\r\nother\r\n:0\r\n" {
	}
}

// TestShardedPubsubCluster: in cluster mode a shard channel is routed as
// a key: its slot must be this node's (MOVED otherwise), and the channels
// of one SSUBSCRIBE must share a slot (CROSSSLOT), as in Redis Cluster;
// plain SUBSCRIBE and PUBLISH are not routed.
func TestShardedPubsubCluster(t *testing.T) {
	nodes, m := startCluster(t, server.Config{})
	c := dialRESP(t, nodes[0].addr)
	local, remote := keyOn(m, m.Nodes[0], "ch"), keyOn(m, m.Nodes[2], "ch")
	moved := "-MOVED " + strconv.Itoa(cluster.KeySlot([]byte(remote))) + " " + m.Nodes[2].Addr + "\r\n"
	c.Expect(multibulk("SPUBLISH", remote, "m"), moved)
	c.Expect(multibulk("SPUBLISH", local, "m"), ":0\r\n")
	c.Expect(multibulk("SSUBSCRIBE", local, remote), "-"+errCrossSlot+"\r\n")
	c.Expect(multibulk("SSUBSCRIBE", remote), moved)
	c.Expect(multibulk("PUBLISH", remote, "m"), ":0\r\n")
	c.Expect(multibulk("SSUBSCRIBE", tagOf(local)+"a", tagOf(local)+"b"),
		"*3\r\n$10\r\nssubscribe\r\n"+bulk(tagOf(local)+"a")+":1\r\n", "*3\r\n$10\r\nssubscribe\r\n"+bulk(tagOf(local)+"b")+":2\r\n")
	c.Expect(multibulk("SUNSUBSCRIBE", remote), moved)
	c.Expect(multibulk("SUNSUBSCRIBE"), "*3\r\n$12\r\nsunsubscribe\r\n"+bulk(tagOf(local)+"a")+":1\r\n",
		"*3\r\n$12\r\nsunsubscribe\r\n"+bulk(tagOf(local)+"b")+":0\r\n")
}

// TestShardedPubsubGoRedis: go-redis's SSubscribe and SPublish, over
// RESP2 and RESP3.
func TestShardedPubsubGoRedis(t *testing.T) {
	rs := startRESP(t, server.Config{}, store.Config{})
	for _, proto := range []int{2, 3} {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		rdb := redis.NewClient(&redis.Options{Addr: rs.respAddr, Protocol: proto})
		defer rdb.Close()
		ps := rdb.SSubscribe(ctx, "gr:events")
		if _, err := ps.Receive(ctx); err != nil { // the confirmation
			t.Fatalf("RESP%d: SSUBSCRIBE: %v", proto, err)
		}
		if n, err := rdb.SPublish(ctx, "gr:events", "hello").Result(); err != nil || n != 1 {
			t.Fatalf("RESP%d: SPUBLISH = %d, %v; want 1", proto, n, err)
		}
		msg, err := ps.ReceiveMessage(ctx)
		if err != nil || msg.Channel != "gr:events" || msg.Payload != "hello" {
			t.Fatalf("RESP%d: message %+v, %v", proto, msg, err)
		}
		if err := ps.SUnsubscribe(ctx, "gr:events"); err != nil {
			t.Fatal(err)
		}
		_ = ps.Close()
	}
}
