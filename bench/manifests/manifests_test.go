// Package manifests benchmarks reading a lake's manifests: iceberg-go's
// reader (ManifestFile.Entries), which parses each manifest's Avro schema,
// builds its node tree and compiles a decoder for it anew, against floe's
// lake.ManifestReader, which does that once per distinct schema — a reader
// per table (lake.LoadState's default) and one reader for the whole lake
// (the daemon's service keeps one).
//
// The lake is internal/scalelake's: N small real tables in the embedded
// SQL catalog (1,000 by default, FLOE_BENCH_MANIFESTS_TABLES), every tenth
// with 12 appends (12 manifests), the others with one. Manifest lists are
// read before the timed phases; each phase reads every manifest of every
// table once, one at a time, and the phases take turns for
// FLOE_BENCH_MANIFESTS_ROUNDS rounds (5), so that a change of the
// machine's load falls on all of them. The result is
// bench/results/manifests.json. FLOE_BENCH_MANIFESTS_PROFILE=DIR writes a
// CPU profile of each phase's rounds to DIR/<phase>.pprof.
//
// Run it with `make bench-manifests`.
package manifests_test

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/bench"
	"github.com/floe-project/floe/bench/scale"
	"github.com/floe-project/floe/internal/scalelake"
	"github.com/floe-project/floe/internal/testlake"
	"github.com/floe-project/floe/lake"
)

// lakeTable is one table's manifests, listed before the timed phases.
type lakeTable struct {
	fio       iceio.IO
	md        table.Metadata
	manifests []iceberg.ManifestFile
}

// phase reads every manifest of tables and returns how many entries it
// read.
type phase struct {
	name string
	read func(tables []lakeTable) (int, error)
}

func icebergGo(tables []lakeTable) (int, error) {
	n := 0
	for _, t := range tables {
		for _, m := range t.manifests {
			for _, err := range m.Entries(t.fio, true) {
				if err != nil {
					return 0, err
				}
				n++
			}
		}
	}
	return n, nil
}

// floe reads with a reader per table, or with shared for every table.
func floe(shared func() *lake.ManifestReader) func(tables []lakeTable) (int, error) {
	return func(tables []lakeTable) (int, error) {
		n := 0
		for _, t := range tables {
			r := shared()
			for _, m := range t.manifests {
				entries, err := r.Entries(t.fio, m, t.md.PartitionSpecByID(int(m.PartitionSpecID())), true)
				if err != nil {
					return 0, err
				}
				n += len(entries)
			}
		}
		return n, nil
	}
}

func BenchmarkManifests(b *testing.B) {
	n := bench.EnvInt(b, "FLOE_BENCH_MANIFESTS_TABLES", 1000)
	rounds := bench.EnvInt(b, "FLOE_BENCH_MANIFESTS_ROUNDS", 5)
	for b.Loop() {
		r := bench.NewResult("manifests")
		w := testlake.NewLocal(b)
		opts := scalelake.Options{Tables: n}
		t0 := time.Now()
		ids, err := scalelake.Generate(b.Context(), w.Catalog, w.Name, opts)
		require.NoError(b, err)
		r.Figures["generate_s"] = time.Since(t0).Seconds()

		tables := make([]lakeTable, len(ids))
		manifests := 0
		for i, id := range ids {
			tbl, err := lake.LoadTable(b.Context(), w.Catalog, id)
			require.NoError(b, err)
			fio, err := tbl.FS(b.Context())
			require.NoError(b, err)
			list, err := tbl.CurrentSnapshot().Manifests(fio)
			require.NoError(b, err)
			tables[i] = lakeTable{fio: fio, md: tbl.Metadata(), manifests: list}
			manifests += len(list)
		}
		r.Params = map[string]any{"tables": n, "manifests": manifests, "rounds": rounds, "store": "local disk"}

		var lakeReader *lake.ManifestReader
		phases := []phase{
			{"icebergo", icebergGo},
			{"floe_per_table", floe(func() *lake.ManifestReader { return lake.NewManifestReader(0) })},
			{"floe_shared", floe(func() *lake.ManifestReader { return lakeReader })},
		}
		cpu := map[string][]float64{}
		wall := map[string][]float64{}
		entries := map[string]int{}
		profiles := map[string]*os.File{}
		if dir := os.Getenv("FLOE_BENCH_MANIFESTS_PROFILE"); dir != "" {
			for _, p := range phases {
				f, err := os.Create(filepath.Join(dir, p.name+".pprof"))
				require.NoError(b, err)
				profiles[p.name] = f
			}
		}
		for round := range rounds {
			lakeReader = lake.NewManifestReader(0)
			for _, p := range phases {
				if f := profiles[p.name]; f != nil && round == 0 {
					require.NoError(b, pprof.StartCPUProfile(f))
				}
				var got int
				use, err := scale.Measure(func() error {
					var err error
					got, err = p.read(tables)
					return err
				})
				require.NoError(b, err)
				if profiles[p.name] != nil && round == 0 {
					pprof.StopCPUProfile()
					require.NoError(b, profiles[p.name].Close())
				}
				if e, ok := entries[p.name]; ok {
					require.Equal(b, e, got)
				}
				entries[p.name] = got
				cpu[p.name] = append(cpu[p.name], use.CPU.Seconds())
				wall[p.name] = append(wall[p.name], use.Wall.Seconds())
			}
			require.Zero(b, lakeReader.Delegated(), "every manifest is read by floe's reader")
		}
		require.Equal(b, entries["icebergo"], entries["floe_per_table"])
		require.Equal(b, entries["icebergo"], entries["floe_shared"])
		r.Params["entries"] = entries["icebergo"]
		r.Params["schemas_parsed_shared"] = lakeReader.Parsed()
		for _, p := range phases {
			r.SetSpread(p.name+"_cpu_s", cpu[p.name])
			r.SetSpread(p.name+"_wall_s", wall[p.name])
			r.Figures[p.name+"_cpu_us_per_manifest"] = bench.SpreadOf(cpu[p.name]).Median / float64(manifests) * 1e6
		}
		for _, p := range phases[1:] {
			r.Figures["icebergo_over_"+p.name+"_cpu_ratio"] = r.Figures["icebergo_cpu_s_median"] / r.Figures[p.name+"_cpu_s_median"]
		}
		b.Logf("%d tables, %d manifests, %d entries: CPU per manifest iceberg-go %.0f us, floe per table %.0f us, floe shared %.0f us",
			n, manifests, entries["icebergo"], r.Figures["icebergo_cpu_us_per_manifest"],
			r.Figures["floe_per_table_cpu_us_per_manifest"], r.Figures["floe_shared_cpu_us_per_manifest"])
		path, err := r.Write()
		require.NoError(b, err)
		b.Logf("result: %s", path)
		fmt.Fprintln(os.Stderr, "wrote", path)
	}
}
