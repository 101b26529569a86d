package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/rewriter/spark/sparktest"
	"github.com/floe-project/floe/rewriter/trino/trinotest"
)

// TestEnginesThroughTheCLI points floe.yaml's engines at in-process fakes of
// Trino's statement protocol and of Spark Connect, and runs the verbs with
// --engine through the real clients: the statements the engines receive,
// floe's check of what they committed (nothing, here: the fakes change no
// table), a layout Trino cannot write refused before anything is sent, and
// floe doctor's trivial query on each engine.
func TestEnginesThroughTheCLI(t *testing.T) {
	t.Parallel()
	dir := policyWarehouse(t, "")
	trino := trinotest.New(t)
	spark := sparktest.Start(t)
	f, err := os.OpenFile(filepath.Join(dir, "floe.yaml"), os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString(`engines:
  trino:
    type: trino
    dsn: "` + trino.DSN("floe", "catalog=iceberg") + `"
    catalogs: {local: iceberg}
  spark:
    type: spark
    remote: "` + spark.Remote() + `"
    catalogs: {local: lake}
`)
	require.NoError(t, err)
	require.NoError(t, f.Close())

	optimize := `ALTER TABLE "iceberg"."db"."flat" EXECUTE optimize(file_size_threshold => '512MB')`
	trino.Expect(optimize, trinotest.Response{UpdateType: "ALTER TABLE EXECUTE", UpdateCount: 8})
	io, out, errOut := testIO()
	code := runWith(t, io, dir, "compact", "db.flat", "--engine", "trino", "-o", "json")
	require.Equal(t, 0, code, "%s\n%s\nstatements: %q", out, errOut, trino.Statements())
	require.Equal(t, []string{optimize}, trino.Statements())
	res := runResultOf(t, out.Bytes())
	eng := reportOf(t, res, "compact").Engine
	require.NotNil(t, eng, out.String())
	require.Equal(t, "trino", eng.Engine)
	require.Equal(t, "trino", eng.Choice.Name)
	require.Equal(t, "--engine trino", eng.Choice.Reason)
	require.Len(t, eng.Statements, 1)
	require.NotEmpty(t, eng.Statements[0].QueryID, "the engine's query id is kept")
	require.True(t, eng.Verified.NothingToDo, "the fake committed nothing, and floe saw so on reload")

	// Trino writes no z-order: refused before anything is sent.
	io, _, errOut = testIO()
	code = runWith(t, io, dir, "compact", "db.flat", "--engine", "trino", "--layout", "zorder(id, tenant)")
	require.Equal(t, 2, code, errOut.String())
	require.Contains(t, errOut.String(), "cannot write zorder layouts")
	require.Contains(t, errOut.String(), "native, spark")
	require.Len(t, trino.Statements(), 1, "nothing more reached Trino")

	// The manifests on Spark, in text.
	io, out, errOut = testIO()
	code = runWith(t, io, dir, "rewrite-manifests", "db.flat", "--engine", "spark")
	require.Equal(t, 0, code, "%s\n%s", out, errOut)
	require.Equal(t, []string{"CALL `lake`.system.rewrite_manifests(table => '`db`.`flat`')"}, spark.Statements())
	require.Contains(t, out.String(), "manifests ran on engine spark (--engine spark)")
	require.Contains(t, out.String(), "checked: the engine committed nothing")

	// An engine that is not configured.
	io, _, errOut = testIO()
	require.Equal(t, 2, runWith(t, io, dir, "compact", "db.flat", "--engine", "flink"), errOut.String())
	require.Contains(t, errOut.String(), "engine flink: no such engine (engines: native, spark, trino)")

	// floe doctor asks each engine a trivial query.
	trino.Expect("SELECT 1", trinotest.Response{Columns: []trinotest.Column{{Name: "_col0", Type: "integer"}}, Rows: [][]any{{1}}})
	io, out, errOut = testIO()
	code = runWith(t, io, dir, "doctor", "-o", "json")
	require.Equal(t, 0, code, "%s\n%s", out, errOut)
	var doc struct {
		OK     bool `json:"ok"`
		Checks []struct {
			Name, Target, Detail string
			OK                   bool
		} `json:"checks"`
	}
	require.NoError(t, json.Unmarshal(out.Bytes(), &doc), out.String())
	require.True(t, doc.OK)
	var engines []string
	for _, c := range doc.Checks {
		if c.Name == "engine" {
			require.True(t, c.OK, "%+v", c)
			engines = append(engines, strings.Fields(c.Target)[0])
		}
	}
	require.Equal(t, []string{"spark", "trino"}, engines)
	require.Contains(t, trino.Statements(), "SELECT 1")
	require.Contains(t, spark.Statements(), "SELECT 1")
}

// An engine that does not answer fails floe doctor (exit 1), naming the
// engine, and its password is printed nowhere.
func TestDoctorEngineDown(t *testing.T) {
	t.Parallel()
	dir := policyWarehouse(t, "")
	f, err := os.OpenFile(filepath.Join(dir, "floe.yaml"), os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString("engines:\n  trino:\n    type: trino\n    dsn: \"https://floe:hunter2@127.0.0.1:1?catalog=iceberg\"\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	io, out, errOut := testIO()
	code := runWith(t, io, dir, "doctor", "--timeout", "5s")
	require.Equal(t, 1, code, "%s\n%s", out, errOut)
	require.Contains(t, out.String(), "trino (trino https://floe@127.0.0.1:1)")
	require.NotContains(t, out.String()+errOut.String(), "hunter2")
}
