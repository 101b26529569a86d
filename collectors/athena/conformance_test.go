package athena_test

import (
	"path/filepath"
	"testing"

	"github.com/floe-project/floe/collectors/athena"
	"github.com/floe-project/floe/collectors/collectortest"
)

func TestConformance(t *testing.T) {
	t.Run("api", func(t *testing.T) {
		collectortest.Run(t, athena.APIParser{},
			filepath.Join(fixtures, "batch_get_query_execution.json"),
			filepath.Join(fixtures, "get_query_execution_cli.json"),
			filepath.Join(fixtures, "query_executions.ndjson"))
	})
	t.Run("cloudtrail", func(t *testing.T) {
		collectortest.Run(t, athena.CloudTrailParser{}, filepath.Join(fixtures, "cloudtrail.json"))
	})
}
