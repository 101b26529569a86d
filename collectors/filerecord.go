package collectors

import "time"

// FileRecord is the bookkeeping of one collected input: what incremental
// collection remembers so that an unchanged file is not read again. The
// ingestion pipeline (collectors/ingest) writes it, the state store keeps
// it.
type FileRecord struct {
	// Path is the input's path as given to collection (cleaned, absolute
	// when the caller made it so).
	Path   string `json:"path"`
	Source string `json:"source"`
	// Size and ModTime are the file's at the time it was read; a file whose
	// size and modification time are unchanged is not read again.
	Size    int64     `json:"size"`
	ModTime time.Time `json:"mod_time"`
	// Events and Bad count what the last read of the file yielded.
	Events      int       `json:"events"`
	Bad         int       `json:"bad"`
	CollectedAt time.Time `json:"collected_at"`
}

// Unchanged reports whether a file of size and modTime is the one r
// recorded.
func (r FileRecord) Unchanged(size int64, modTime time.Time) bool {
	return r.Size == size && r.ModTime.Equal(modTime)
}
