package layout

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
)

// Stream is a skewed streaming shape: events arriving in time order (a tenth of them
// late, by up to a day) over StreamDays days, tenants Zipf-distributed (a few hold most
// rows), amounts log-normal, a handful of kinds, one rare. Its workload: one day of
// events, a tenant over a week, a tenant alone, a user, large amounts, and a rare kind
// over three days. Partitioned, it is partitioned by day(event_ts).
var Stream = Workload{
	Name:      "stream",
	Templates: []string{"day", "tenant-week", "tenant", "user", "large-amount", "refunds-3-days"},
	Candidates: []string{
		"current",
		"binpack",
		"sort(tenant_id)",
		"sort(tenant_id, event_ts)",
		"zorder(tenant_id, amount)",
		"hilbert(tenant_id, user_id)",
	},
	SQL:       streamSQL,
	schema:    StreamSchema,
	generate:  GenerateStream,
	partition: iceberg.PartitionField{SourceIDs: []int{1}, FieldID: 1000, Name: "event_day", Transform: iceberg.DayTransform{}},
}

// StreamDays is the number of days the stream shape's events span.
const StreamDays = 30

// streamTenants is the number of tenants of the stream shape.
const streamTenants = 400

var (
	streamStart = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	streamKinds = []string{"view", "view", "view", "view", "click", "click", "purchase", "signup", "refund"}
)

// StreamSchema is the stream shape's schema.
func StreamSchema() *iceberg.Schema {
	req := func(id int, name string, t iceberg.Type) iceberg.NestedField {
		return iceberg.NestedField{ID: id, Name: name, Type: t, Required: true}
	}
	return iceberg.NewSchema(0,
		req(1, "event_ts", iceberg.PrimitiveTypes.Timestamp),
		req(2, "tenant_id", iceberg.PrimitiveTypes.Int64),
		req(3, "user_id", iceberg.PrimitiveTypes.Int64),
		req(4, "amount", iceberg.PrimitiveTypes.Float64),
		req(5, "kind", iceberg.PrimitiveTypes.String),
	)
}

// GenerateStream builds rows events as files batches in arrival order (each batch a
// consecutive window of time, a tenth of its events late by up to a day), seeded by
// seed. The caller releases the batches.
func GenerateStream(schema *arrow.Schema, rows, files int, seed uint64) ([]arrow.RecordBatch, error) {
	rng := rand.New(rand.NewPCG(seed, 0x57e4))
	zipf := rand.NewZipf(rng, 1.3, 4, streamTenants-1)
	span := int64(StreamDays) * 86400 * 1_000_000
	return generateInOrder(schema, "stream", rows, files, func(b *array.RecordBuilder, at int) {
		us := span * int64(at) / int64(rows)
		if rng.IntN(10) == 0 {
			us = max(0, us-rng.Int64N(86400*1_000_000))
		}
		tenant := int64(zipf.Uint64()) + 1
		b.Field(0).(*array.TimestampBuilder).Append(arrow.Timestamp(streamStart.UnixMicro() + us))
		b.Field(1).(*array.Int64Builder).Append(tenant)
		b.Field(2).(*array.Int64Builder).Append(tenant*1000 + rng.Int64N(1000))
		b.Field(3).(*array.Float64Builder).Append(math.Round(math.Exp(rng.NormFloat64()*1.2+3)*100) / 100)
		b.Field(4).(*array.StringBuilder).Append(streamKinds[rng.IntN(len(streamKinds))])
	})
}

// generateInOrder builds rows rows as files batches of consecutive rows, row at (0 … rows-1,
// in arrival order) appended by appendRow. The caller releases the batches.
func generateInOrder(schema *arrow.Schema, shape string, rows, files int, appendRow func(b *array.RecordBuilder, at int)) ([]arrow.RecordBatch, error) {
	if rows <= 0 || files <= 0 || files > rows {
		return nil, fmt.Errorf("generate %s: need 0 < files <= rows, got rows=%d files=%d", shape, rows, files)
	}
	out := make([]arrow.RecordBatch, 0, files)
	at := 0
	for f := range files {
		n := rows / files
		if f < rows%files {
			n++
		}
		b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
		for range n {
			appendRow(b, at)
			at++
		}
		out = append(out, b.NewRecordBatch())
		b.Release()
	}
	return out, nil
}

func streamSQL(tableName string, _ int, seed uint64, perTemplate int) string {
	rng := rand.New(rand.NewPCG(seed, 0x57e5))
	zipf := rand.NewZipf(rng, 1.3, 4, streamTenants-1)
	from := fmt.Sprintf("FROM %s.%s", Namespace, tableName)
	ts := func(d int) string {
		return streamStart.AddDate(0, 0, d).Format("2006-01-02 15:04:05")
	}
	var stmts []string
	for range perTemplate {
		d := rng.IntN(StreamDays)
		stmts = append(stmts, fmt.Sprintf("SELECT count(*) %s WHERE event_ts >= TIMESTAMP '%s' AND event_ts < TIMESTAMP '%s'", from, ts(d), ts(d+1)))
		d = rng.IntN(StreamDays - 7)
		stmts = append(stmts, fmt.Sprintf("SELECT kind, count(*) %s WHERE tenant_id = %d AND event_ts >= TIMESTAMP '%s' AND event_ts < TIMESTAMP '%s' GROUP BY kind",
			from, zipf.Uint64()+1, ts(d), ts(d+7)))
		stmts = append(stmts, fmt.Sprintf("SELECT sum(amount) %s WHERE tenant_id = %d", from, zipf.Uint64()+1))
		tenant := zipf.Uint64() + 1
		stmts = append(stmts, fmt.Sprintf("SELECT count(*) %s WHERE user_id = %d", from, tenant*1000+uint64(rng.IntN(1000))))
		stmts = append(stmts, fmt.Sprintf("SELECT tenant_id %s WHERE amount > %d", from, 400+rng.IntN(400)))
		d = rng.IntN(StreamDays - 3)
		stmts = append(stmts, fmt.Sprintf("SELECT count(*) %s WHERE kind = 'refund' AND event_ts >= TIMESTAMP '%s' AND event_ts < TIMESTAMP '%s'", from, ts(d), ts(d+3)))
	}
	return joinStatements(stmts)
}
