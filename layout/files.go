package layout

import "math"

// TailAllowance is how far past the target file size a rewrite lets a file
// grow to take the last rows of its partition, instead of writing them to a
// small file of their own: 10%, Iceberg's own rule (a rewrite distributes
// its remainder among the other files when their average stays within 110%
// of the target, SizeBasedFileRewritePlanner). The rewriter's writer follows
// it ([FilesFor]), and the simulator projects file counts with the same
// rule, so that a partition whose bytes sit at the target is one file in
// both — rather than one in the one and two in the other on a 2% size
// error.
const TailAllowance = 0.1

// FilesFor is how many files a rewrite writes for data bytes in files that
// each take room bytes: ⌈data/room⌉, less one when the last file would hold
// no more than [TailAllowance] of room (it goes into the file before it), and
// at least one.
func FilesFor(data, room float64) int {
	if room <= 0 {
		return 1
	}
	return max(1, int(math.Ceil(data/room-TailAllowance-1e-9)))
}
