package rewriter_test

import (
	"context"
	"fmt"

	"github.com/apache/iceberg-go/table"

	"github.com/floe-project/floe/rewriter"
)

// ExampleRewriteGroup rewrites the files of one partition ordered by a layout
// key within 1 GiB of memory, then commits them as one rewrite snapshot. The
// Keyer would normally be the simulator's encoder for the approved layout.
func ExampleRewriteGroup() {
	ctx := context.Background()
	var (
		tbl   *table.Table         // loaded from the catalog
		tasks []table.FileScanTask // one partition's tasks from tbl.Scan().PlanFiles
		keyer rewriter.Keyer       // the layout key
	)
	if tbl == nil {
		return // this example shows the calls; it has no table to run on
	}
	orderID := tbl.SortOrder().OrderID()
	files, stats, err := rewriter.RewriteGroup(ctx, tbl, tasks, rewriter.GroupOptions{
		TargetFileSizeBytes: 512 << 20,
		MemoryBytes:         1 << 30,
		Keyer:               keyer,
		SortOrderID:         &orderID,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	tx := tbl.NewTransaction()
	rw := tx.NewRewrite(nil)
	for _, t := range rewriter.CollapseTasks(tasks) {
		rw.DeleteFile(t.File)
	}
	for _, f := range files {
		rw.AddDataFile(f)
	}
	if err := rw.Commit(ctx); err != nil {
		fmt.Println(err)
		return
	}
	if _, err := tx.Commit(ctx); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(stats.InputFiles, "files into", stats.OutputFiles)
}
