package icebergscan_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/floe-project/floe/collectors"
	"github.com/floe-project/floe/collectors/icebergscan"
)

// Point an Iceberg client's REST metrics reporting at the handler: each
// scan report becomes an event whose table carries the pushed filter.
func ExampleNewHandler() {
	h := icebergscan.NewHandler(func(ev collectors.QueryEvent) error {
		t := ev.Tables[0]
		filter, _ := json.Marshal(t.Filter)
		fmt.Println(t.QualifiedName(), "skipped", t.Metrics.SkippedDataFiles, "of", t.Metrics.SkippedDataFiles+t.Metrics.ResultDataFiles, "files")
		fmt.Println(string(filter))
		return nil
	})
	body := `{"report-type":"scan-report","table-name":"demo.sales.orders","snapshot-id":1,"schema-id":0,"projected-field-ids":[4],
	  "filter":{"type":"eq","term":"customer_id","value":"(2-digit-int)"},
	  "projected-field-names":["amount"],
	  "metrics":{"result-data-files":{"unit":"count","value":3},"skipped-data-files":{"unit":"count","value":41}}}`
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/v1/lake/namespaces/sales/tables/orders/metrics", strings.NewReader(body)))
	fmt.Println(rec.Code)
	// Output:
	// demo.sales.orders skipped 41 of 44 files
	// {"kind":"pred","pred":{"table":"demo.sales.orders","column":"customer_id","op":"=","values":[{"kind":"unknown","text":"(2-digit-int)"}]}}
	// 204
}
