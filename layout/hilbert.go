package layout

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
)

// maxHilbertDims bounds the dimensions AppendHilbertIndex accepts (the layout itself allows
// MaxHilbertColumns).
const maxHilbertDims = 16

// AppendHilbertIndex appends the Hilbert index of the point coords on a grid of 2^nbits cells per
// axis: len(coords)·nbits bits, most significant first, padded with zero bits to whole bytes, so
// that bytes.Compare orders points along the curve. The curve starts at the origin and
// consecutive indices are grid neighbours. It uses John Skilling's transform ("Programming the
// Hilbert curve", AIP Conf. Proc. 707, 2004): AxesToTranspose, then the transposed bits read
// MSB first across axes. coords must be below 2^nbits; 1 ≤ nbits ≤ 32; 1 ≤ len(coords) ≤ 16.
func AppendHilbertIndex(dst []byte, coords []uint32, nbits int) ([]byte, error) {
	if len(coords) < 1 || len(coords) > maxHilbertDims {
		return dst, fmt.Errorf("hilbert index: %d dimensions, want 1 to %d", len(coords), maxHilbertDims)
	}
	if nbits < 1 || nbits > 32 {
		return dst, fmt.Errorf("hilbert index: %d bits per axis, want 1 to 32", nbits)
	}
	var x [maxHilbertDims]uint32
	for i, c := range coords {
		if nbits < 32 && c>>nbits != 0 {
			return dst, fmt.Errorf("hilbert index: coordinate %d = %d does not fit in %d bits", i, c, nbits)
		}
		x[i] = c
	}
	axesToTranspose(x[:len(coords)], nbits)
	return appendInterleavedCoords(dst, x[:len(coords)], nbits), nil
}

// axesToTranspose turns coordinates into the "transposed" Hilbert index in place (Skilling):
// afterwards bit q of x[i] is bit q·n + (n-1-i) of the index.
func axesToTranspose(x []uint32, nbits int) {
	if len(x) == 2 {
		x[0], x[1] = axesToTranspose2(x[0], x[1], nbits)
		return
	}
	axesToTransposeN(x, nbits)
}

// axesToTransposeN is axesToTranspose for any number of axes.
func axesToTransposeN(x []uint32, nbits int) {
	n := len(x)
	m := uint32(1) << (nbits - 1)
	// Inverse undo.
	for q := m; q > 1; q >>= 1 {
		p := q - 1
		for i := range n {
			if x[i]&q != 0 {
				x[0] ^= p // invert
			} else {
				t := (x[0] ^ x[i]) & p // exchange
				x[0] ^= t
				x[i] ^= t
			}
		}
	}
	// Gray encode.
	for i := 1; i < n; i++ {
		x[i] ^= x[i-1]
	}
	var t uint32
	for q := m; q > 1; q >>= 1 {
		if x[n-1]&q != 0 {
			t ^= q - 1
		}
	}
	for i := range n {
		x[i] ^= t
	}
}

// axesToTranspose2 is axesToTranspose for two axes, the common layout, with
// the coordinates in registers rather than a slice: the same steps, unrolled
// (for i = 0 the exchange is a no-op). A fifth of a Hilbert rewrite's key
// time went to the general loop.
func axesToTranspose2(x0, x1 uint32, nbits int) (uint32, uint32) {
	m := uint32(1) << (nbits - 1)
	for q := m; q > 1; q >>= 1 {
		p := q - 1
		if x0&q != 0 {
			x0 ^= p
		}
		if x1&q != 0 {
			x0 ^= p
		} else {
			t := (x0 ^ x1) & p
			x0 ^= t
			x1 ^= t
		}
	}
	x1 ^= x0
	var t uint32
	for q := m; q > 1; q >>= 1 {
		if x1&q != 0 {
			t ^= q - 1
		}
	}
	return x0 ^ t, x1 ^ t
}

// hilbertEncoder maps 2 to MaxHilbertColumns columns to quantile coordinates and orders rows
// along the Hilbert curve through them.
type hilbertEncoder struct {
	keyBase
	coords coordMapper
}

func newHilbertEncoder(b keyBase, q *Quantiles) (*hilbertEncoder, error) {
	m, err := newCoordMapper(b, q, "hilbert")
	if err != nil {
		return nil, err
	}
	return &hilbertEncoder{keyBase: b, coords: m}, nil
}

func (e *hilbertEncoder) AppendKey(dst []byte, rec arrow.RecordBatch, row int) ([]byte, error) {
	if err := e.check(rec, row); err != nil {
		return dst, err
	}
	var c [MaxHilbertColumns]uint32
	x := c[:len(e.cols)]
	dst, err := e.coords.fill(x, dst, rec, row)
	if err != nil {
		return dst, err
	}
	axesToTranspose(x, e.coords.bits)
	return appendInterleavedCoords(dst, x, e.coords.bits), nil
}
