package demo

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// The Snowflake log is two Snowsight "Download results" CSV exports of
// SNOWFLAKE.ACCOUNT_USAGE views: QUERY_HISTORY and ACCESS_HISTORY, joined
// by floe on QUERY_ID. Timestamps are in the session time zone
// (America/Los_Angeles, PST in the demo's season); ARRAY cells are
// pretty-printed JSON with embedded newlines, and multi-line SQL is quoted.
// Only successful queries that read tables have ACCESS_HISTORY rows.

var snowflakeHistoryHeader = []string{
	"QUERY_ID", "QUERY_TEXT", "DATABASE_NAME", "SCHEMA_NAME", "QUERY_TYPE", "SESSION_ID", "USER_NAME", "ROLE_NAME",
	"WAREHOUSE_NAME", "WAREHOUSE_SIZE", "WAREHOUSE_TYPE", "QUERY_TAG", "EXECUTION_STATUS", "ERROR_CODE", "ERROR_MESSAGE",
	"START_TIME", "END_TIME", "TOTAL_ELAPSED_TIME", "BYTES_SCANNED", "PERCENTAGE_SCANNED_FROM_CACHE", "ROWS_PRODUCED",
	"COMPILATION_TIME", "EXECUTION_TIME", "QUEUED_PROVISIONING_TIME", "QUEUED_OVERLOAD_TIME",
	"PARTITIONS_SCANNED", "PARTITIONS_TOTAL", "QUERY_HASH", "QUERY_PARAMETERIZED_HASH", "RELEASE_VERSION",
}

var snowflakeAccessHeader = []string{
	"QUERY_ID", "QUERY_START_TIME", "USER_NAME", "DIRECT_OBJECTS_ACCESSED", "BASE_OBJECTS_ACCESSED",
	"OBJECTS_MODIFIED", "OBJECT_MODIFIED_BY_DDL", "POLICIES_REFERENCED", "PARENT_QUERY_ID", "ROOT_QUERY_ID",
}

var snowflakeUsers = []struct{ user, role string }{
	{"ALICE", "ANALYST"}, {"BOB", "ANALYST"}, {"TABLEAU_SVC", "REPORTER"}, {"LOOKER_SVC", "REPORTER"},
	{"LOOKER_SVC", "REPORTER"}, {"DBT_PROD", "TRANSFORMER"}, {"ERIN", "ANALYST"}, {"TABLEAU_SVC", "REPORTER"},
}

var pacific = time.FixedZone("PST", -8*3600)

func snowflakeTime(t time.Time) string { return t.In(pacific).Format("2006-01-02 15:04:05.000 -0700") }

type sfObject struct {
	Columns      []sfColumn `json:"columns"`
	ObjectDomain string     `json:"objectDomain"`
	ObjectID     int64      `json:"objectId"`
	ObjectName   string     `json:"objectName"`
}

type sfColumn struct {
	ColumnID   int64  `json:"columnId"`
	ColumnName string `json:"columnName"`
}

func sfObjects(scans []scan, cols func(scan) []string) (string, error) {
	objs := []sfObject{}
	for _, s := range scans {
		info := s.t.info()
		oid := int64(40960 + 256*int(s.t))
		o := sfObject{ObjectDomain: "Table", ObjectID: oid, ObjectName: strings.ToUpper("ANALYTICS." + info.ns + "." + info.name)}
		for _, c := range cols(s) {
			o.Columns = append(o.Columns, sfColumn{ColumnID: oid + int64(s.t.fieldID(c)), ColumnName: strings.ToUpper(c)})
		}
		objs = append(objs, o)
	}
	b, err := json.MarshalIndent(objs, "", "  ")
	return string(b), err
}

func snowflakeID(lw *logWriter) string {
	r := lw.r
	return "01" + randHex(r, 6) + "-" + randHex(r, 4) + "-" + randHex(r, 4) + "-0000-" + randHex(r, 12)
}

func writeSnowflake(lw *logWriter, qs []*query) error {
	type row struct {
		q        *query
		id, text string
	}
	rows := make([]row, len(qs))
	for i, q := range qs {
		text := q.sql(engSnowflake)
		if q.user == 3 || q.user == 4 {
			text = fmt.Sprintf("-- Looker Query Context '{\"user_id\":%d,\"history_slug\":\"%s\",\"instance_slug\":\"%s\"}'\n%s",
				1+lw.r.IntN(40), randHex(lw.r, 32), randHex(lw.r, 32), text)
		}
		rows[i] = row{q, snowflakeID(lw), text}
	}
	err := lw.create("query_history.csv", func(w *bufio.Writer) error {
		cw := csv.NewWriter(w)
		if err := cw.Write(snowflakeHistoryHeader); err != nil {
			return err
		}
		for _, rw := range rows {
			q := rw.q
			u := snowflakeUsers[q.user]
			status, code, msg, qtype := "SUCCESS", "", "", "SELECT"
			switch q.fail {
			case failColumn:
				status, code, qtype = "FAIL", "000904", "UNKNOWN"
				msg = "SQL compilation error: error line 1 at position 7\ninvalid identifier 'TENANT'"
			case failTable:
				status, code, qtype = "FAIL", "002003", "UNKNOWN"
				msg = "SQL compilation error:\nObject 'ANALYTICS.WEB.EVENT' does not exist or not authorized."
			case failCancel, failRuntime:
				status, code, msg = "FAIL", "000604", "SQL execution canceled"
			}
			if q.utility {
				qtype = "DESCRIBE"
			}
			var parts, total int64
			for _, s := range q.scans {
				res, skip := s.dataFiles(q.at)
				parts += res
				total += res + skip
			}
			compile := int64(20 + lw.r.IntN(300))
			elapsed := q.elapsed.Milliseconds() + compile
			rec := []string{
				rw.id, rw.text, "ANALYTICS", strings.ToUpper(q.ns()), qtype, fmt.Sprint(2251799813685248 + int64(q.user)*4096 + lw.r.Int64N(4096)),
				u.user, u.role, "ANALYTICS_WH", "Medium", "STANDARD", "", status, code, msg,
				snowflakeTime(q.at), snowflakeTime(q.at.Add(time.Duration(elapsed) * time.Millisecond)), fmt.Sprint(elapsed),
				fmt.Sprint(q.bytes), fmt.Sprintf("%.2f", lw.r.Float64()*0.6), fmt.Sprint(1 + lw.r.IntN(200)),
				fmt.Sprint(compile), fmt.Sprint(q.elapsed.Milliseconds()), "0", "0",
				fmt.Sprint(parts), fmt.Sprint(total), randHex(lw.r, 32), randHex(lw.r, 32), "9.38.2",
			}
			if err := cw.Write(rec); err != nil {
				return err
			}
			lw.event(q)
		}
		cw.Flush()
		return cw.Error()
	})
	if err != nil {
		return err
	}
	return lw.create("access_history.csv", func(w *bufio.Writer) error {
		cw := csv.NewWriter(w)
		if err := cw.Write(snowflakeAccessHeader); err != nil {
			return err
		}
		for _, rw := range rows {
			q := rw.q
			if q.fail != failNone || len(q.scans) == 0 {
				continue
			}
			direct, err := sfObjects(q.scans, func(s scan) []string { return s.out })
			if err != nil {
				return err
			}
			base, err := sfObjects(q.scans, func(s scan) []string { return s.read })
			if err != nil {
				return err
			}
			rec := []string{rw.id, snowflakeTime(q.at), snowflakeUsers[q.user].user, direct, base, "[]", "", "[]", "", ""}
			if err := cw.Write(rec); err != nil {
				return err
			}
		}
		cw.Flush()
		return cw.Error()
	})
}
