package control

import (
	"context"
	"time"

	"github.com/floe-project/floe/control/policy"
	"github.com/floe-project/floe/control/store"
	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/simulator"
)

// DefaultFileOpenBytes is what opening one data file costs a query when
// the policy sets no cost.file_open_bytes: 4 MiB of scan, the engines' own
// figure for it — Iceberg's read.split.open-file-cost and Spark's
// spark.sql.files.openCostInBytes both default to 4 MiB, the bytes that
// could be scanned in the time a file takes to open, read its footer and
// plan. It is what makes many small files slow although they hold few
// bytes.
const DefaultFileOpenBytes = 4 << 20

// RewriteBytesPerVCPUSecond is the bytes a rewrite reads and writes per
// vCPU-second, the estimate its CPU is reckoned from: 32 MiB/s, about what
// one core decodes, orders and encodes of compressed Parquet. It only
// matters when cost.usd_per_vcpu_hour prices the CPU.
const RewriteBytesPerVCPUSecond = 32 << 20

// bytesPerTB is the terabyte prices are quoted per (10^12 bytes, as cloud
// query engines bill).
const bytesPerTB = 1e12

// CostModel prices what engines pay: bytes scanned, files opened, and a
// rewrite's bytes and CPU. The zero value counts bytes and files at
// [DefaultFileOpenBytes], with no prices.
type CostModel struct {
	// FileOpenBytes is what opening one data file costs a query (open,
	// footer, planning), in bytes of scan that take as long; negative
	// counts bytes only. Default: [DefaultFileOpenBytes].
	FileOpenBytes int64
	// USDPerTBScanned prices a terabyte scanned; zero: paybacks are stated
	// in bytes only.
	USDPerTBScanned float64
	// USDPerVCPUHour prices a vCPU-hour of a rewrite; zero: not priced.
	USDPerVCPUHour float64
}

// CostModelOf is the cost model of a table's effective policy (cost.*).
// A policy's cost.file_open_bytes of 0 counts bytes only.
func CostModelOf(p policy.Policy) CostModel {
	m := CostModel{FileOpenBytes: p.Cost.FileOpenBytes, USDPerTBScanned: p.Cost.USDPerTBScanned, USDPerVCPUHour: p.Cost.USDPerVCPUHour}
	if m.FileOpenBytes == 0 {
		m.FileOpenBytes = -1
	}
	return m
}

// fileOpenBytes is the per-file cost in effect.
func (m CostModel) fileOpenBytes() float64 {
	switch {
	case m.FileOpenBytes < 0:
		return 0
	case m.FileOpenBytes == 0:
		return DefaultFileOpenBytes
	}
	return float64(m.FileOpenBytes)
}

// CostBasis is everything a candidate's cost/benefit depends on beside its
// projection: the cost model, the table's bytes, the query rate and the
// longest payback accepted. The report, the dashboard, plan and the
// daemon's choice build it with [NewCostBasis], so they state the same
// payback for the same table.
type CostBasis struct {
	Model CostModel
	// DataBytes is the table's live data bytes today.
	DataBytes int64
	// Queries is the workload's queries in the window; WindowDays the
	// window they were collected over ([QueryWindowDays]); QueriesPerDay
	// their quotient, the rate savings are counted at.
	Queries       int
	WindowDays    float64
	QueriesPerDay float64
	// MaxPayback is the longest payback a rewrite may have to be chosen;
	// zero: [DefaultMaxPayback].
	MaxPayback time.Duration
}

// NewCostBasis is the cost basis of the table in state under policy p, for
// queries collected queries read over since (0: all) up to now.
func NewCostBasis(ctx context.Context, st *store.Store, state *lake.State, p policy.Policy, queries int, since time.Duration, now time.Time) (CostBasis, error) {
	b := CostBasis{Model: CostModelOf(p), Queries: queries, MaxPayback: p.MaxPayback}
	for _, f := range state.DataFiles {
		b.DataBytes += f.SizeBytes
	}
	days, err := QueryWindowDays(ctx, st, state.Ident, since, now)
	if err != nil {
		return b, err
	}
	b.WindowDays, b.QueriesPerDay = days, float64(queries)/days
	return b, nil
}

// maxPaybackDays is MaxPayback in days, the default when unset.
func (b CostBasis) maxPaybackDays() float64 {
	if b.MaxPayback <= 0 {
		return DefaultMaxPayback.Hours() / 24
	}
	return b.MaxPayback.Hours() / 24
}

// Cost is one candidate's cost/benefit against the current layout
// ([CostBasis.Of]).
type Cost struct {
	// ScanBytesSavedPerQuery is the bytes a query reads less: (current's
	// BytesReadPct − the candidate's) / 100 × DataBytes.
	ScanBytesSavedPerQuery float64
	// FilesSavedPerQuery is the data files a query opens less: current's
	// MeanFilesRead − the candidate's.
	FilesSavedPerQuery float64
	// SavedBytesPerDay is what the layout saves a day, in bytes of scan:
	// (ScanBytesSavedPerQuery + FilesSavedPerQuery × the file cost) ×
	// queries per day. Negative when it costs more than today.
	SavedBytesPerDay float64
	// RewriteIOBytes is what the rewrite reads and writes once: the bytes
	// it reads plus those it writes (read × the projection's SizeRatio).
	RewriteIOBytes int64
	// RewriteVCPUHours is the rewrite's CPU, estimated from RewriteIOBytes
	// at [RewriteBytesPerVCPUSecond].
	RewriteVCPUHours float64
	// PaybackDays is how long the savings take to repay the rewrite: in
	// money when the model prices scans (RewriteUSD / SavedUSDPerDay),
	// else RewriteIOBytes / SavedBytesPerDay. Nil when nothing is saved.
	PaybackDays *float64
	// SavedUSDPerDay and RewriteUSD state the same in money; nil unless
	// the model prices scans (USDPerTBScanned). RewriteUSD prices the
	// rewrite's bytes as a scan and its CPU at USDPerVCPUHour.
	SavedUSDPerDay *float64
	RewriteUSD     *float64
}

// Pays says the candidate saves something and repays its rewrite within
// the basis' max payback.
func (b CostBasis) Pays(c Cost) bool {
	return c.PaybackDays != nil && *c.PaybackDays <= b.maxPaybackDays()
}

// Of is candidate p's cost/benefit against the current layout cur: the one
// cost function behind every payback floe states. A query costs the bytes
// it reads plus, for every data file it opens, the model's file cost; a
// rewrite costs the bytes it reads and writes, and in money also its CPU.
func (b CostBasis) Of(cur, p simulator.Projection) Cost {
	c := Cost{
		ScanBytesSavedPerQuery: (cur.BytesReadPct - p.BytesReadPct) / 100 * float64(b.DataBytes),
		FilesSavedPerQuery:     cur.MeanFilesRead - p.MeanFilesRead,
	}
	c.SavedBytesPerDay = (c.ScanBytesSavedPerQuery + c.FilesSavedPerQuery*b.Model.fileOpenBytes()) * b.QueriesPerDay
	sizeRatio := p.SizeRatio
	if sizeRatio <= 0 {
		sizeRatio = 1
	}
	c.RewriteIOBytes = p.RewriteBytes + int64(float64(p.RewriteBytes)*sizeRatio)
	c.RewriteVCPUHours = float64(c.RewriteIOBytes) / RewriteBytesPerVCPUSecond / 3600
	if b.Model.USDPerTBScanned > 0 {
		saved := c.SavedBytesPerDay / bytesPerTB * b.Model.USDPerTBScanned
		cost := float64(c.RewriteIOBytes)/bytesPerTB*b.Model.USDPerTBScanned + c.RewriteVCPUHours*b.Model.USDPerVCPUHour
		c.SavedUSDPerDay, c.RewriteUSD = &saved, &cost
		if saved > 0 {
			d := cost / saved
			c.PaybackDays = &d
		}
		return c
	}
	if c.SavedBytesPerDay > 0 {
		d := float64(c.RewriteIOBytes) / c.SavedBytesPerDay
		c.PaybackDays = &d
	}
	return c
}

// QueryWindowDays is the window a table's query rate divides by, in days:
// the span from its first collected query to now (at least a day), capped
// by since when set. A since wider than the telemetry that exists does not
// dilute the rate: 7 days of queries under --since 30d are 7 days, as the
// dashboard (which sets no since) counts them, so every path states the
// same payback for the same table.
func QueryWindowDays(ctx context.Context, st *store.Store, id lake.Ident, since time.Duration, now time.Time) (float64, error) {
	d := 1.0
	if st != nil {
		stats, err := st.TableStats(ctx, store.QueryFilter{Table: id.String()}, 0)
		if err != nil {
			return 0, err
		}
		for _, s := range stats {
			if !s.FirstSeen.IsZero() {
				d = max(d, now.Sub(s.FirstSeen).Hours()/24)
			}
		}
	}
	if since > 0 {
		d = min(d, max(since.Hours()/24, 1.0/24))
	}
	return d, nil
}
