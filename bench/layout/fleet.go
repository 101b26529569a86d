package layout

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
)

// Fleet is a second skewed multi-dimensional shape, written after the tree learner was
// tuned on [Skewed] and not tuned on: device telemetry arriving in time order over
// FleetDays days from Zipf-distributed devices, each at one of a dozen sites, with
// temperatures that run hot on a few devices, batteries draining and rare error codes.
// Its workload differs in mix and ranges: time windows of six hours to three days,
// device lookups and short device lists, a site over a day, hot readings (temp_c > 45),
// low batteries (battery_pct < 4) and error code lists. Partitioned, it is partitioned
// by day(reading_ts).
var Fleet = Workload{
	Name:      "fleet",
	Templates: []string{"window", "device", "device-list", "site-day", "hot", "low-battery", "errors"},
	Candidates: []string{
		"current",
		"sort(reading_ts)",
		"sort(device_id, reading_ts)",
		"zorder(reading_ts, device_id)",
		"hilbert(reading_ts, device_id)",
		"hilbert(temp_c, battery_pct)",
		"tree(reading_ts, device_id, site, temp_c, battery_pct, error_code)",
	},
	SQL:       fleetSQL,
	schema:    FleetSchema,
	generate:  GenerateFleet,
	partition: iceberg.PartitionField{SourceIDs: []int{1}, FieldID: 1000, Name: "reading_day", Transform: iceberg.DayTransform{}},
}

// FleetDays is the number of days the fleet shape's readings span.
const FleetDays = 30

const (
	fleetDevices = 20_000
	fleetSites   = 12
)

// FleetSchema is the fleet shape's schema.
func FleetSchema() *iceberg.Schema {
	req := func(id int, name string, t iceberg.Type) iceberg.NestedField {
		return iceberg.NestedField{ID: id, Name: name, Type: t, Required: true}
	}
	return iceberg.NewSchema(0,
		req(1, "reading_ts", iceberg.PrimitiveTypes.Timestamp),
		req(2, "device_id", iceberg.PrimitiveTypes.Int64),
		req(3, "site", iceberg.PrimitiveTypes.String),
		req(4, "temp_c", iceberg.PrimitiveTypes.Float64),
		req(5, "battery_pct", iceberg.PrimitiveTypes.Int32),
		req(6, "error_code", iceberg.PrimitiveTypes.Int32),
	)
}

func fleetSite(device int64) string { return fmt.Sprintf("site-%02d", device*7%fleetSites) }

// GenerateFleet builds rows readings as files batches in arrival order (each batch a
// consecutive window of time), seeded by seed. The caller releases the batches.
func GenerateFleet(schema *arrow.Schema, rows, files int, seed uint64) ([]arrow.RecordBatch, error) {
	rng := rand.New(rand.NewPCG(seed, 0xf1ee7))
	zipf := rand.NewZipf(rng, 1.05, 20, fleetDevices-1)
	span := int64(FleetDays) * 86400 * 1_000_000
	return generateInOrder(schema, "fleet", rows, files, func(b *array.RecordBuilder, at int) {
		us := span * int64(at) / int64(rows)
		device := int64(zipf.Uint64()) + 1
		temp := 22 + rng.NormFloat64()*6
		if device%97 == 0 { // a few devices run hot
			temp += 20 + rng.Float64()*15
		}
		battery := int32(100 - (us*100/span+device)%100)
		code := int32(0)
		if rng.IntN(200) == 0 {
			code = int32(1 + rng.IntN(60))
		}
		b.Field(0).(*array.TimestampBuilder).Append(arrow.Timestamp(streamStart.UnixMicro() + us))
		b.Field(1).(*array.Int64Builder).Append(device)
		b.Field(2).(*array.StringBuilder).Append(fleetSite(device))
		b.Field(3).(*array.Float64Builder).Append(math.Round(temp*100) / 100)
		b.Field(4).(*array.Int32Builder).Append(battery)
		b.Field(5).(*array.Int32Builder).Append(code)
	})
}

func fleetSQL(tableName string, _ int, seed uint64, perTemplate int) string {
	rng := rand.New(rand.NewPCG(seed, 0xf1ee8))
	zipf := rand.NewZipf(rng, 1.05, 20, fleetDevices-1)
	from := fmt.Sprintf("FROM %s.%s", Namespace, tableName)
	ts := func(h int) string {
		return streamStart.Add(time.Duration(h) * time.Hour).Format("2006-01-02 15:04:05")
	}
	var stmts []string
	for range perTemplate {
		h := rng.IntN(FleetDays*24 - 72)
		stmts = append(stmts, fmt.Sprintf("SELECT avg(temp_c) %s WHERE reading_ts >= TIMESTAMP '%s' AND reading_ts < TIMESTAMP '%s'", from, ts(h), ts(h+6+rng.IntN(66))))
		stmts = append(stmts, fmt.Sprintf("SELECT * %s WHERE device_id = %d", from, zipf.Uint64()+1))
		ids := make([]string, 5)
		for i := range ids {
			ids[i] = fmt.Sprint(zipf.Uint64() + 1)
		}
		stmts = append(stmts, fmt.Sprintf("SELECT device_id, max(temp_c) %s WHERE device_id IN (%s) GROUP BY device_id", from, strings.Join(ids, ", ")))
		h = rng.IntN(FleetDays*24 - 24)
		stmts = append(stmts, fmt.Sprintf("SELECT count(*) %s WHERE site = 'site-%02d' AND reading_ts >= TIMESTAMP '%s' AND reading_ts < TIMESTAMP '%s'", from, rng.IntN(fleetSites), ts(h), ts(h+24)))
		stmts = append(stmts, fmt.Sprintf("SELECT device_id, temp_c %s WHERE temp_c > %d", from, 42+rng.IntN(8)))
		stmts = append(stmts, fmt.Sprintf("SELECT device_id %s WHERE battery_pct < %d", from, 2+rng.IntN(4)))
		codes := make([]string, 3)
		for i := range codes {
			codes[i] = fmt.Sprint(1 + rng.IntN(60))
		}
		stmts = append(stmts, fmt.Sprintf("SELECT * %s WHERE error_code IN (%s)", from, strings.Join(codes, ", ")))
	}
	return joinStatements(stmts)
}
