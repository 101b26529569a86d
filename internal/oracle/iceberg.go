package oracle

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go/table"
)

// ErrUnsupportedDeletes is returned by the DuckDB checksums when live
// equality deletes or deletion vectors would have to be applied; use
// [ChecksumIceberg] for such tables.
var ErrUnsupportedDeletes = errors.New("oracle: equality deletes and deletion vectors are not applied by the duckdb path")

// Sum is an order-independent digest of a multiset of rows.
type Sum struct {
	// Rows is the row count.
	Rows int64
	// Sum is the sum of the row hashes modulo 2^64.
	Sum uint64
	// Xor is the xor of the row hashes.
	Xor uint64
}

// String renders the sum for test messages.
func (s Sum) String() string {
	return fmt.Sprintf("rows=%d sum=%016x xor=%016x", s.Rows, s.Sum, s.Xor)
}

// ChecksumIceberg reads the current snapshot of tbl through iceberg-go's scan
// (deletes applied) and digests every row over all columns.
func ChecksumIceberg(ctx context.Context, tbl *table.Table) (Sum, error) {
	var s Sum
	if tbl.CurrentSnapshot() == nil {
		return s, nil
	}
	scan := tbl.Scan()
	defer scan.Close()
	_, it, err := scan.ToArrowRecords(ctx)
	if err != nil {
		return s, fmt.Errorf("scan %s: %w", tbl.Location(), err)
	}
	buf := make([]byte, 0, 256)
	for rec, err := range it {
		if err != nil {
			return s, fmt.Errorf("scan %s: %w", tbl.Location(), err)
		}
		for i := range int(rec.NumRows()) {
			buf = buf[:0]
			for c := range int(rec.NumCols()) {
				buf = appendValue(buf, rec.Column(c), i)
			}
			h := fnv.New64a()
			_, _ = h.Write(buf) // hash.Hash never fails
			v := mix(h.Sum64())
			s.Rows++
			s.Sum += v
			s.Xor ^= v
		}
		rec.Release()
	}
	return s, nil
}

// appendValue appends a self-delimiting encoding of arr[i].
func appendValue(dst []byte, arr arrow.Array, i int) []byte {
	if arr.IsNull(i) {
		return append(dst, 0)
	}
	dst = append(dst, 1)
	switch a := arr.(type) {
	case *array.Int64:
		return binary.LittleEndian.AppendUint64(dst, uint64(a.Value(i)))
	case *array.Int32:
		return binary.LittleEndian.AppendUint32(dst, uint32(a.Value(i)))
	case *array.Float64:
		return binary.LittleEndian.AppendUint64(dst, math.Float64bits(a.Value(i)))
	case *array.Float32:
		return binary.LittleEndian.AppendUint32(dst, math.Float32bits(a.Value(i)))
	case *array.Timestamp:
		return binary.LittleEndian.AppendUint64(dst, uint64(a.Value(i)))
	case *array.Date32:
		return binary.LittleEndian.AppendUint32(dst, uint32(a.Value(i)))
	case *array.Boolean:
		if a.Value(i) {
			return append(dst, 1)
		}
		return append(dst, 0)
	case *array.String:
		v := a.Value(i)
		dst = binary.AppendUvarint(dst, uint64(len(v)))
		return append(dst, v...)
	case *array.LargeString:
		v := a.Value(i)
		dst = binary.AppendUvarint(dst, uint64(len(v)))
		return append(dst, v...)
	case *array.Binary:
		v := a.Value(i)
		dst = binary.AppendUvarint(dst, uint64(len(v)))
		return append(dst, v...)
	default:
		// Any other type (nested, decimal, …): its canonical text form.
		v := arr.ValueStr(i)
		dst = binary.AppendUvarint(dst, uint64(len(v)))
		return append(dst, v...)
	}
}

// mix is the splitmix64 finalizer: it spreads FNV's output so that sums of
// hashes of similar rows do not collide in the low bits.
func mix(z uint64) uint64 {
	z ^= z >> 30
	z *= 0xbf58476d1ce4e5b9
	z ^= z >> 27
	z *= 0x94d049bb133111eb
	return z ^ z>>31
}

// LiveFiles lists the data files of tbl's current snapshot and the position
// delete files that apply to them, as plain paths (file:// stripped). It
// returns ErrUnsupportedDeletes when equality deletes or deletion vectors are
// live.
func LiveFiles(ctx context.Context, tbl *table.Table) (data, posDeletes []string, err error) {
	if tbl.CurrentSnapshot() == nil {
		return nil, nil, nil
	}
	scan := tbl.Scan()
	defer scan.Close()
	tasks, err := scan.PlanFiles(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("plan files of %s: %w", tbl.Location(), err)
	}
	seen := make(map[string]bool)
	for _, t := range tasks {
		if len(t.EqualityDeleteFiles) > 0 || len(t.DeletionVectorFiles) > 0 {
			return nil, nil, fmt.Errorf("%s: %w", t.File.FilePath(), ErrUnsupportedDeletes)
		}
		if p := LocalPath(t.File.FilePath()); !seen[p] {
			seen[p] = true
			data = append(data, p)
		}
		for _, d := range t.DeleteFiles {
			if p := LocalPath(d.FilePath()); !seen[p] {
				seen[p] = true
				posDeletes = append(posDeletes, p)
			}
		}
	}
	return data, posDeletes, nil
}

// LocalPath strips the file:// scheme of a local Iceberg location.
func LocalPath(loc string) string {
	return strings.TrimPrefix(loc, "file://")
}
