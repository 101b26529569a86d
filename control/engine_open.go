package control

import (
	"context"
	"fmt"

	"github.com/floe-project/floe/control/config"
	"github.com/floe-project/floe/rewriter"
	"github.com/floe-project/floe/rewriter/spark"
	"github.com/floe-project/floe/rewriter/trino"
)

// OpenEngine opens engine name of floe.yaml's engines: by its type: a
// Trino client (rewriter/trino) or a Spark Connect session
// (rewriter/spark), with the password or token from the environment.
func OpenEngine(ctx context.Context, name string, ec config.EngineConfig) (rewriter.Engine, error) {
	switch ec.Type {
	case config.EngineTrino:
		e, err := trino.Open(trino.Config{Name: name, DSN: ec.DSN.Reveal(), Password: ec.Password.Reveal(), Timeout: ec.TimeoutDuration()})
		if err != nil {
			return nil, err
		}
		return e, nil
	case config.EngineSpark:
		e, err := spark.Open(ctx, spark.Config{Name: name, Remote: ec.Remote.Reveal(), Token: ec.Token.Reveal(), Timeout: ec.TimeoutDuration()})
		if err != nil {
			return nil, err
		}
		return e, nil
	default:
		return nil, fmt.Errorf("%w: engine %s: type %q: want %v", config.ErrInvalid, name, ec.Type, config.EngineTypes)
	}
}
