package spark

import (
	"github.com/floe-project/floe/expr"
	"strconv"
	"strings"
	"time"
)

// Retype re-types a literal that Iceberg printed in a Spark filter, once
// the Iceberg type of its column is known (ingestion looks it up in the
// table schema; the event log does not carry it). A number on a date
// column is a day count since 1970-01-01 and becomes Kind date
// ("2024-04-01"); on a timestamp / timestamptz column it is epoch
// microseconds (timestamp_ns / timestamptz_ns: nanoseconds) and becomes
// Kind timestamp ("2021-06-30 02:00:00", UTC, fraction only when non-zero;
// timestamptz text ends in "+00:00"). Any other value or type is returned
// unchanged.
func Retype(icebergType string, v expr.Value) expr.Value {
	if v.Kind != expr.KindNumber {
		return v
	}
	n, err := strconv.ParseInt(v.Text, 10, 64)
	if err != nil {
		return v
	}
	typ := strings.ToLower(strings.TrimSpace(icebergType))
	switch typ {
	case "date":
		if n < -1e8 || n > 1e8 {
			return v
		}
		return expr.Value{Kind: expr.KindDate, Text: time.Unix(n*86400, 0).UTC().Format("2006-01-02")}
	case "timestamp", "timestamptz", "timestamp_ns", "timestamptz_ns":
		var t time.Time
		if strings.HasSuffix(typ, "_ns") {
			t = time.Unix(0, n).UTC()
		} else {
			t = time.UnixMicro(n).UTC()
		}
		text := t.Format("2006-01-02 15:04:05.999999999")
		if strings.HasPrefix(typ, "timestamptz") {
			text += "+00:00"
		}
		return expr.Value{Kind: expr.KindTimestamp, Text: text}
	}
	return v
}

// RetypeFilter returns a copy of n with every number literal re-typed by
// [Retype], using typeOf to find the Iceberg type name of a predicate's
// column (return "" when unknown). A leaf under the day transform holds a
// day count whatever its column's type, so it becomes a date.
func RetypeFilter(n *expr.Node, typeOf func(table, column string) string) *expr.Node {
	if n == nil {
		return nil
	}
	c := *n
	if n.Pred != nil {
		p := *n.Pred
		typ := ""
		switch p.Transform {
		case "":
			typ = typeOf(p.Table, p.Column)
		case "day", "days":
			typ = "date"
		}
		if typ != "" {
			p.Values = make([]expr.Value, len(n.Pred.Values))
			for i, v := range n.Pred.Values {
				p.Values[i] = Retype(typ, v)
			}
		}
		c.Pred = &p
	}
	if len(n.Children) > 0 {
		c.Children = make([]*expr.Node, len(n.Children))
		for i, ch := range n.Children {
			c.Children[i] = RetypeFilter(ch, typeOf)
		}
	}
	return &c
}
