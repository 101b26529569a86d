package rowsum

import (
	"math/rand/v2"
	"testing"

	"github.com/cespare/xxhash/v2"
)

// sum64 must be xxhash64 exactly, at every length around its cases (8- and
// 4-byte steps, single bytes, the library's own path from 32 bytes on), or
// sums recorded earlier would no longer compare.
func TestSum64IsXXHash64(t *testing.T) {
	r := rand.New(rand.NewPCG(47, 1))
	buf := make([]byte, 80)
	for n := range len(buf) {
		for range 50 {
			for i := range buf[:n] {
				buf[i] = byte(r.Uint32())
			}
			if got, want := sum64(buf[:n]), xxhash.Sum64(buf[:n]); got != want {
				t.Fatalf("len %d % x: sum64 %016x, xxhash %016x", n, buf[:n], got, want)
			}
		}
	}
}
