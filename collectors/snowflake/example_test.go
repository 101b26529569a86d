package snowflake_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/floe-project/floe/collectors"
	"github.com/floe-project/floe/collectors/snowflake"
)

// A Joiner pairs a QUERY_HISTORY export with an ACCESS_HISTORY export read
// after it; Flush then emits the queries that found no partner.
func ExampleJoiner() {
	history := `QUERY_ID,QUERY_TEXT,EXECUTION_STATUS,START_TIME,BYTES_SCANNED
q1,"select amount from orders where customer_id = 42",SUCCESS,2024-05-01 05:51:30.123 -0700,73400320
q2,show tables,SUCCESS,2024-05-01 05:52:00.000 -0700,0
`
	access := `QUERY_ID,QUERY_START_TIME,DIRECT_OBJECTS_ACCESSED,BASE_OBJECTS_ACCESSED
q1,2024-05-01 05:51:30.123 -0700,"[{""objectDomain"":""Table"",""objectName"":""LAKE.SALES.ORDERS"",""columns"":[{""columnName"":""AMOUNT""}]}]","[{""objectDomain"":""Table"",""objectName"":""LAKE.SALES.ORDERS"",""columns"":[{""columnName"":""AMOUNT""},{""columnName"":""CUSTOMER_ID""}]}]"
`
	show := func(ev collectors.QueryEvent) error {
		fmt.Println(ev.QueryID, ev.StartTime.Format("15:04:05.000Z07:00"), ev.State, ev.Metrics.BytesScanned)
		for _, t := range ev.Tables {
			for _, c := range t.Columns {
				fmt.Printf("  %s.%s %v\n", t.QualifiedName(), c.Name, c.Roles)
			}
		}
		return nil
	}
	fail := func(b collectors.BadRecord) error { return b }

	j := snowflake.NewJoiner()
	if err := j.Parse(context.Background(), "query_history.csv", strings.NewReader(history), show, fail); err != nil {
		fmt.Println(err)
	}
	if err := j.Parse(context.Background(), "access_history.csv", strings.NewReader(access), show, fail); err != nil {
		fmt.Println(err)
	}
	if err := j.Flush(show); err != nil {
		fmt.Println(err)
	}
	// Output:
	// q1 12:51:30.123Z SUCCEEDED 73400320
	//   LAKE.SALES.ORDERS.CUSTOMER_ID [filter]
	//   LAKE.SALES.ORDERS.AMOUNT [projection]
	// q2 12:52:00.000Z SUCCEEDED 0
}
