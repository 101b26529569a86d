package main

import (
	"github.com/schollz/progressbar/v3"
)

// progress shows a bar on ErrOut when it is a terminal and does nothing
// otherwise, so that logs and pipes stay clean.
type progress struct {
	io  *IOStreams
	bar *progressbar.ProgressBar
	key string
}

func newProgress(io *IOStreams) *progress { return &progress{io: io} }

// Set shows done of total for a named step, starting a new bar when the
// step changes.
func (p *progress) Set(step string, done, total int) {
	if !p.io.ErrTTY {
		return
	}
	if p.bar == nil || p.key != step {
		if p.bar != nil {
			_ = p.bar.Finish()
		}
		p.key = step
		p.bar = progressbar.NewOptions(total,
			progressbar.OptionSetWriter(p.io.ErrOut),
			progressbar.OptionSetDescription(step),
			progressbar.OptionShowCount(),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionClearOnFinish(),
		)
	}
	_ = p.bar.Set(done)
}

// Done clears the bar.
func (p *progress) Done() {
	if p.bar != nil {
		_ = p.bar.Finish()
		p.bar = nil
	}
}
