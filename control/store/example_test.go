package store_test

import (
	"context"
	"errors"
	"fmt"
	"github.com/floe-project/floe/collectors"
	"github.com/floe-project/floe/control/store"
	"github.com/floe-project/floe/expr"
	"time"
)

// Storing a query twice keeps one copy; reading it back restores its
// filter tree.
func Example() {
	ctx := context.Background()
	s, err := store.Open(ctx, ":memory:")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	ev := collectors.QueryEvent{
		Source: "trino-event", Engine: collectors.EngineTrino, QueryID: "20260501_120000_00001_abcde",
		User: "alice", StartTime: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC), State: collectors.StateSucceeded,
		SQL: "SELECT * FROM web.events WHERE tenant_id = 7",
		Tables: []collectors.TableAccess{{
			Catalog: "local", Namespace: "web", Name: "events", Direct: true, Evidence: collectors.EvidenceSQL,
			Filter: &expr.Node{Kind: expr.NodePred, Pred: &expr.Pred{
				Table: "local.web.events", Column: "tenant_id", Op: expr.OpEq,
				Values: []expr.Value{{Kind: expr.KindNumber, Text: "7"}},
			}},
		}},
	}
	for range 2 {
		ins, dup, err := s.InsertEvents(ctx, []collectors.QueryEvent{ev})
		fmt.Println("inserted", ins, "duplicates", dup, err)
	}
	evs, _ := s.Queries(ctx, store.QueryFilter{Table: "WEB.EVENTS"})
	fmt.Println(len(evs), evs[0].Tables[0].QualifiedName(), evs[0].Tables[0].Filter)
	stats, _ := s.TableStats(ctx, store.QueryFilter{}, 3)
	fmt.Println(stats[0].Table, stats[0].Queries, stats[0].TopColumns[0].Column)
	// Output:
	// inserted 1 duplicates 0 <nil>
	// inserted 0 duplicates 1 <nil>
	// 1 local.web.events tenant_id = 7
	// local.web.events 1 tenant_id
}

// Two floe processes share tables through leases: each claims what is
// free, renews while it works, and learns when it lost a table.
func ExampleStore_ClaimTables() {
	ctx := context.Background()
	s, err := store.Open(ctx, ":memory:")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	tables := []string{"lake.web.events", "lake.web.clicks", "lake.sales.orders"}
	a, _ := s.ClaimTables(ctx, "host-a:1", tables, 2, now.Add(time.Minute), now)
	b, _ := s.ClaimTables(ctx, "host-b:2", tables, 2, now.Add(time.Minute), now)
	fmt.Println(a, b)
	// host-a stops renewing; after the lease lapses host-b takes its tables.
	later := now.Add(2 * time.Minute)
	b, _ = s.ClaimTables(ctx, "host-b:2", tables, 3, later.Add(time.Minute), later)
	fmt.Println(b)
	err = s.RenewLease(ctx, "host-a:1", "lake.web.events", "run-7", later.Add(time.Minute))
	fmt.Println(errors.Is(err, store.ErrLeaseLost))
	// Output:
	// [lake.web.events lake.web.clicks] [lake.sales.orders]
	// [lake.web.events lake.web.clicks lake.sales.orders]
	// true
}
