package rewriter

import (
	"bytes"
	"fmt"
	"testing"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/stretchr/testify/require"
)

// TestCodesRoundTrip codes string and binary arrays (sliced, with nulls,
// empty values) and turns the codes back into the very arrays.
func TestCodesRoundTrip(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	vals := []string{"eu", "", "us", "eu", "ap", "", "us", "eu"}
	valid := []bool{true, true, false, true, true, true, true, false}
	for _, dt := range []arrow.DataType{arrow.BinaryTypes.String, arrow.BinaryTypes.Binary, arrow.BinaryTypes.LargeString, arrow.BinaryTypes.LargeBinary} {
		t.Run(dt.String(), func(t *testing.T) {
			b := array.NewBuilder(mem, dt)
			defer b.Release()
			for i, v := range vals {
				switch {
				case !valid[i]:
					b.AppendNull()
				case dt.ID() == arrow.STRING || dt.ID() == arrow.LARGE_STRING:
					b.(interface{ Append(string) }).Append(v)
				default:
					b.(interface{ Append([]byte) }).Append([]byte(v))
				}
			}
			full := b.NewArray()
			defer full.Release()
			arr := array.NewSlice(full, 1, int64(full.Len())) // an offset to honour
			defer arr.Release()

			book := newCodebook(1 << 20)
			codes, err := encodeColumn(mem, book, arr)
			require.NoError(t, err)
			defer codes.Release()
			require.Equal(t, arr.Len(), codes.Len())
			require.Equal(t, arr.NullN(), codes.NullN())
			require.Equal(t, 4, book.len(), `"", "eu", "ap", "us": each once, the null none`)
			back, err := decodeColumn(mem, book, dt, codes)
			require.NoError(t, err)
			defer back.Release()
			require.True(t, array.Equal(arr, back), "got %v, want %v", back, arr)

			_, err = decodeColumn(mem, book, dt, arr)
			require.ErrorContains(t, err, "not codes")
		})
	}
}

// TestCodebookLimit: a book refuses the value that would take it past its
// limit (plain size, 4 + len per value), and keeps coding values it holds.
func TestCodebookLimit(t *testing.T) {
	book := newCodebook(4 + 2 + 4 + 2)
	for _, v := range []string{"eu", "us", "eu"} {
		_, err := book.code([]byte(v))
		require.NoError(t, err)
	}
	_, err := book.code([]byte("ap"))
	require.ErrorIs(t, err, errCodebookFull)
	c, err := book.code([]byte("us"))
	require.NoError(t, err)
	require.Equal(t, int32(1), c)
	require.Equal(t, "us", string(book.value(c)))
}

// TestDictColumnAddCodesMatchesAdd: a dictionary column fed codes holds
// what it holds fed the values: the same dictionary, in the same order,
// the same indices, and it stops at the same row when the dictionary page
// fills; and again after a reset, for the next row group.
func TestDictColumnAddCodesMatchesAdd(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	props := parquet.NewWriterProperties(parquet.WithAllocator(mem), parquet.WithDictionaryPageSizeLimit(60))
	book := newCodebook(1 << 20)
	// The book has seen values in another order, and one the row group
	// never holds.
	for _, v := range []string{"zz", "c", "b", "unused"} {
		_, err := book.code([]byte(v))
		require.NoError(t, err)
	}
	values := func(n int) arrow.Array {
		b := array.NewStringBuilder(mem)
		defer b.Release()
		for i := range n {
			b.Append([]string{"b", "c", "b", "zz", fmt.Sprintf("v%02d", i%40)}[i%5])
		}
		return b.NewArray()
	}
	for round := range 2 {
		plain := values(200)
		codes, err := encodeColumn(mem, book, plain)
		require.NoError(t, err)

		byVal := newDictColumn(arrow.BinaryTypes.String, props)
		byCode := newDictColumn(arrow.BinaryTypes.String, props)
		tookVal := byVal.add(plain)
		tookCode := byCode.addCodes(codes, book)
		require.Less(t, tookVal, 200, "round %d: the 60-byte dictionary page must fill", round)
		require.Equal(t, tookVal, tookCode, "round %d", round)
		require.Equal(t, byVal.vals, byCode.vals, "round %d", round)
		require.Equal(t, byVal.offs, byCode.offs, "round %d", round)
		require.Equal(t, byVal.dictSz, byCode.dictSz, "round %d", round)
		require.Equal(t, idxOf(byVal), idxOf(byCode), "round %d", round)

		// The next row group starts from an empty dictionary.
		byCode.reset()
		head := array.NewSlice(codes, 0, 3)
		require.Equal(t, 3, byCode.addCodes(head, book))
		head.Release()
		require.Equal(t, 2, byCode.entries())
		require.Equal(t, "bc", string(byCode.vals))
		require.Equal(t, []int32{0, 1, 0}, idxOf(byCode))

		byVal.release()
		byCode.release()
		plain.Release()
		codes.Release()
	}
}

func idxOf(d *dictColumn) []int32 {
	return append([]int32(nil), unsafe.Slice((*int32)(unsafe.Pointer(unsafe.SliceData(d.idx.Bytes()))), d.rows)...)
}

// TestDictPagesOnly: a column is asked for as a dictionary only when all its
// data pages are dictionary-encoded: not when it fell back to plain pages
// partway (a dictionary page past its limit), nor when it has no
// dictionary.
func TestDictPagesOnly(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	sch := arrow.NewSchema([]arrow.Field{{Name: "s", Type: arrow.BinaryTypes.String}}, nil)
	b := array.NewRecordBuilder(mem, sch)
	for i := range 20_000 {
		b.Field(0).(*array.StringBuilder).Append(fmt.Sprintf("value %d", i%50))
	}
	rec := b.NewRecordBatch()
	b.Release()
	defer rec.Release()
	cases := []struct {
		name  string
		props []parquet.WriterProperty
		want  bool
	}{
		{name: "dictionary pages only", want: true},
		{name: "fell back to plain", props: []parquet.WriterProperty{parquet.WithDictionaryPageSizeLimit(64), parquet.WithBatchSize(1000)}},
		{name: "no dictionary", props: []parquet.WriterProperty{parquet.WithDictionaryDefault(false)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			props := parquet.NewWriterProperties(append([]parquet.WriterProperty{parquet.WithDataPageSize(4 << 10)}, tc.props...)...)
			w, err := pqarrow.NewFileWriter(sch, &buf, props, pqarrow.DefaultWriterProps())
			require.NoError(t, err)
			require.NoError(t, w.Write(rec))
			require.NoError(t, w.Close())
			rdr, err := file.NewParquetReader(bytes.NewReader(buf.Bytes()))
			require.NoError(t, err)
			defer rdr.Close()
			require.Equal(t, tc.want, dictPagesOnly(rdr, 0))
		})
	}
}
