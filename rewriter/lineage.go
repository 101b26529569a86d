package rewriter

import (
	"cmp"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// minLineageVersion is the first format version whose rows carry row
// lineage (_row_id and _last_updated_sequence_number).
const minLineageVersion = 3

// rowLineage reports whether the rows of tbl carry row lineage, which a
// rewrite must keep: the Iceberg spec ("Row Lineage") has a row moved to
// another data file keep its _row_id, and a row not modified keep its
// _last_updated_sequence_number. True for format version 3 and later.
func rowLineage(tbl *table.Table) bool {
	return tbl.Metadata().Version() >= minLineageVersion
}

// lineageSchema is schema with the row-lineage columns appended, when
// lineage is set: _row_id (field id [iceberg.RowIDFieldID]) and then
// _last_updated_sequence_number ([iceberg.LastUpdatedSequenceNumberFieldID]),
// the columns and the order iceberg-go's scan gives them in with
// table.WithRowLineage. Else schema itself.
func lineageSchema(schema *iceberg.Schema, lineage bool) *iceberg.Schema {
	if !lineage {
		return schema
	}
	return iceberg.SchemaWithRowLineage(schema)
}

// readOptions are the options of every scan of a group's rows, read to be
// rewritten or read back to be checked: at most workers files decoded at
// once (0: one), in batches of batchRows rows (0: [DefaultScanBatchRows]),
// and on a table with row lineage its two columns after the table's.
//
// iceberg-go's scan gives each row's lineage as the spec defines it: the
// value stored in the file where the file has the column and the value is
// not null, else inherited, _row_id as the file's first_row_id plus the
// row's position in the file and _last_updated_sequence_number as the data
// sequence number of its manifest entry; both before any delete drops a row,
// so a row keeps its id whatever was deleted before it. The task must carry
// FirstRowID and DataSequenceNumber for the inherited values (the planner's
// tasks and lake.State.ScanTasks' do); a task without them, such as a read
// back of files not yet committed, gives null where the file holds none.
func readOptions(tbl *table.Table, workers, batchRows int) []table.ScanOption {
	opts := []table.ScanOption{
		table.WithMaxConcurrency(max(workers, 1)),
		table.WithArrowBatchSize(cmp.Or(batchRows, DefaultScanBatchRows)),
	}
	if rowLineage(tbl) {
		opts = append(opts, table.WithRowLineage())
	}
	return opts
}
