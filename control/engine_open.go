package control

import (
	"context"
	"fmt"

	"github.com/floe-project/floe/control/config"
	"github.com/floe-project/floe/rewriter"
)

// OpenEngine opens engine name of floe.yaml's engines: by its type.
func OpenEngine(ctx context.Context, name string, ec config.EngineConfig) (rewriter.Engine, error) {
	switch ec.Type {
	default:
		return nil, fmt.Errorf("%w: engine %s: type %q: want %v", config.ErrInvalid, name, ec.Type, config.EngineTypes)
	}
}
