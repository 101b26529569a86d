package main

import (
	"github.com/schollz/progressbar/v3"
)

// progress shows a bar on ErrOut when it is a terminal and does nothing
// otherwise, so that logs and pipes stay clean.
type progress struct {
	io   *IOStreams
	bar  *progressbar.ProgressBar
	key  string
	desc string // the bar's label (Bytes)
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

// Bytes shows done of total bytes for a named step, with the transfer rate
// and the time left estimated from the bytes; desc is the bar's label and
// may change without starting a new bar. The bar starts, and its clock with
// it, at the first call: call it with zero done before the work begins, or
// the estimate is taken from no elapsed time.
func (p *progress) Bytes(step, desc string, done, total int64) {
	if !p.io.ErrTTY || total <= 0 {
		return
	}
	if p.bar == nil || p.key != step {
		if p.bar != nil {
			_ = p.bar.Finish()
		}
		p.key, p.desc = step, desc
		p.bar = progressbar.NewOptions64(total,
			progressbar.OptionSetWriter(p.io.ErrOut),
			progressbar.OptionSetDescription(desc),
			progressbar.OptionShowBytes(true),
			progressbar.OptionShowCount(),
			progressbar.OptionUseIECUnits(true),
			progressbar.OptionThrottle(p.io.ProgressThrottle),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionSetRenderBlankState(true),
			progressbar.OptionClearOnFinish(),
		)
	}
	if desc != p.desc {
		p.desc = desc
		p.bar.Describe(desc)
	}
	_ = p.bar.Set64(min(done, total))
}

// Done clears the bar.
func (p *progress) Done() {
	if p.bar != nil {
		_ = p.bar.Finish()
		p.bar = nil
	}
}
