package layout

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
)

// Skewed is a skewed multi-dimensional shape, issue 46's: events arriving in time order
// over SkewedDays days, accounts Zipf-distributed, a few kinds (one rare), positions
// clustered around a handful of cities, amounts log-normal. Its workload mixes what no
// single order serves: time ranges of a day to a week (the most frequent), account
// lookups, a rare kind over a few days, geographic boxes around a city and amount
// thresholds. Its candidates are the best sorts and curves on those columns and the tree
// learned from the workload. Partitioned, it is partitioned by day(event_ts).
var Skewed = Workload{
	Name:      "skewed",
	Templates: []string{"time-range", "time-range-2", "account", "account-month", "rare-kind", "geo-box", "amount-threshold"},
	Candidates: []string{
		"current",
		"sort(event_ts)",
		"sort(account_id, event_ts)",
		"zorder(event_ts, account_id)",
		"hilbert(event_ts, account_id)",
		"hilbert(lat, lon)",
		"tree(event_ts, account_id, kind, lat, lon, amount)",
	},
	SQL:       skewedSQL,
	schema:    SkewedSchema,
	generate:  GenerateSkewed,
	partition: iceberg.PartitionField{SourceIDs: []int{1}, FieldID: 1000, Name: "event_day", Transform: iceberg.DayTransform{}},
}

// SkewedDays is the number of days the skewed shape's events span.
const SkewedDays = 60

const skewedAccounts = 5000

var (
	skewedKinds  = []string{"view", "view", "view", "view", "view", "click", "click", "purchase", "purchase", "refund"}
	skewedCities = [][2]float64{{48.85, 2.35}, {40.71, -74.0}, {35.68, 139.69}, {-33.87, 151.21}, {51.5, -0.12}, {19.43, -99.13}, {-23.55, -46.63}, {28.61, 77.2}}
)

// SkewedSchema is the skewed shape's schema.
func SkewedSchema() *iceberg.Schema {
	req := func(id int, name string, t iceberg.Type) iceberg.NestedField {
		return iceberg.NestedField{ID: id, Name: name, Type: t, Required: true}
	}
	return iceberg.NewSchema(0,
		req(1, "event_ts", iceberg.PrimitiveTypes.Timestamp),
		req(2, "account_id", iceberg.PrimitiveTypes.Int64),
		req(3, "kind", iceberg.PrimitiveTypes.String),
		req(4, "lat", iceberg.PrimitiveTypes.Float64),
		req(5, "lon", iceberg.PrimitiveTypes.Float64),
		req(6, "amount", iceberg.PrimitiveTypes.Float64),
	)
}

// GenerateSkewed builds rows events as files batches in arrival order (each batch a
// consecutive window of time), seeded by seed. An account lives in one city, so position
// and account are correlated as they are in real data. The caller releases the batches.
func GenerateSkewed(schema *arrow.Schema, rows, files int, seed uint64) ([]arrow.RecordBatch, error) {
	rng := rand.New(rand.NewPCG(seed, 0x5ce3))
	zipf := rand.NewZipf(rng, 1.1, 8, skewedAccounts-1)
	span := int64(SkewedDays) * 86400 * 1_000_000
	return generateInOrder(schema, "skewed", rows, files, func(b *array.RecordBuilder, at int) {
		us := span * int64(at) / int64(rows)
		account := int64(zipf.Uint64()) + 1
		city := skewedCities[account%int64(len(skewedCities))]
		b.Field(0).(*array.TimestampBuilder).Append(arrow.Timestamp(streamStart.UnixMicro() + us))
		b.Field(1).(*array.Int64Builder).Append(account)
		b.Field(2).(*array.StringBuilder).Append(skewedKinds[rng.IntN(len(skewedKinds))])
		b.Field(3).(*array.Float64Builder).Append(math.Round((city[0]+rng.NormFloat64()*0.5)*1e4) / 1e4)
		b.Field(4).(*array.Float64Builder).Append(math.Round((city[1]+rng.NormFloat64()*0.5)*1e4) / 1e4)
		b.Field(5).(*array.Float64Builder).Append(math.Round(math.Exp(rng.NormFloat64()*1.3+3)*100) / 100)
	})
}

func skewedSQL(tableName string, _ int, seed uint64, perTemplate int) string {
	rng := rand.New(rand.NewPCG(seed, 0x5ce4))
	zipf := rand.NewZipf(rng, 1.1, 8, skewedAccounts-1)
	from := fmt.Sprintf("FROM %s.%s", Namespace, tableName)
	ts := func(h int) string {
		return streamStart.Add(time.Duration(h) * time.Hour).Format("2006-01-02 15:04:05")
	}
	timeRange := func() string {
		h := rng.IntN(SkewedDays*24 - 7*24)
		return fmt.Sprintf("SELECT count(*) %s WHERE event_ts >= TIMESTAMP '%s' AND event_ts < TIMESTAMP '%s'", from, ts(h), ts(h+24+rng.IntN(6*24)))
	}
	var stmts []string
	for range perTemplate {
		stmts = append(stmts, timeRange(), timeRange())
		stmts = append(stmts, fmt.Sprintf("SELECT sum(amount) %s WHERE account_id = %d", from, zipf.Uint64()+1))
		h := rng.IntN(SkewedDays*24 - 30*24)
		stmts = append(stmts, fmt.Sprintf("SELECT kind, count(*) %s WHERE account_id = %d AND event_ts >= TIMESTAMP '%s' AND event_ts < TIMESTAMP '%s' GROUP BY kind",
			from, zipf.Uint64()+1, ts(h), ts(h+30*24)))
		h = rng.IntN(SkewedDays*24 - 3*24)
		stmts = append(stmts, fmt.Sprintf("SELECT count(*) %s WHERE kind = 'refund' AND event_ts >= TIMESTAMP '%s' AND event_ts < TIMESTAMP '%s'", from, ts(h), ts(h+3*24)))
		c := skewedCities[rng.IntN(len(skewedCities))]
		dl := 0.2 + rng.Float64()*0.6
		stmts = append(stmts, fmt.Sprintf("SELECT count(*) %s WHERE lat BETWEEN %.2f AND %.2f AND lon BETWEEN %.2f AND %.2f",
			from, c[0]-dl, c[0]+dl, c[1]-dl, c[1]+dl))
		stmts = append(stmts, fmt.Sprintf("SELECT account_id %s WHERE amount > %d", from, 300+rng.IntN(700)))
	}
	return joinStatements(stmts)
}
