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

// LeafPackBelow is the share of a target file below which a leaf of a tree, in one
// partition, is packed with its neighbours instead of written into files of its own
// ([LeafPacked]).
const LeafPackBelow = 0.75

// LeafPacked reports whether a leaf of a tree whose rows in one partition held
// leafBytes today (their input bytes) is packed: written with the small leaves next to
// it, in leaf order, into files cut at the target size, rather than alone. A tree is
// learned on the whole table with leaves of at least a file, but a partitioned table
// holds a slice of each leaf in each partition: a tree of 18 leaves over 8 days would
// write 144 files where 42 hold the rows, each far below the target (the small files
// floe exists to remove). Packed, a file holds several whole small leaves (its min/max
// spans them, as a sort's file spans its values) and only leaves of three quarters of a
// file or more get files of their own. The rewriter's writer and the simulator's
// projection decide it alike, from the bytes the rows held before the rewrite, which
// both know before a byte is written.
func LeafPacked(leafBytes, target float64) bool {
	return leafBytes < LeafPackBelow*target
}

// LeafFilesFor is how many files a rewrite into a tree writes for one leaf of data
// bytes, files of room bytes each: the leaf's rows are written alone and split into
// files of equal rows, as many as make a file's size nearest to room (a leaf of 2.3
// files' bytes is 2 files of 1.15, one of 2.6 is 3 of 0.87), and at least one. A tree's
// files never hold rows of two leaves, so a leaf is never left a small file of its own
// rest beside full ones, and [TailAllowance] does not apply: the switch from n to n+1
// files lies where a file of n is as far above room as one of n+1 is below it
// (leaf ÷ room = 2n(n+1)/(2n+1): 1.33, 2.4, 3.43, …), so files lie between two thirds
// and four thirds of room, closer to it the larger the leaf.
func LeafFilesFor(data, room float64) int {
	if room <= 0 || data <= room {
		return 1
	}
	x := data / room
	n := math.Floor(x)
	// n files of x/n each (x/n ≥ 1) or n+1 of x/(n+1) each (< 1): the nearer to 1.
	if x/n-1 > 1-x/(n+1) {
		n++
	}
	return int(n)
}
