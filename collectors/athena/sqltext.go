package athena

import (
	"strings"

	"github.com/floe-project/floe/collectors"
)

// statementType names the kind of statement from Athena's
// SubstatementType when it is known, else from the SQL text; statement is
// Athena's coarse DML|DDL|UTILITY, which makes an otherwise unclassified
// statement DDL.
func statementType(sub, statement, sql string) string {
	if t, ok := collectors.StatementTypeNamed(sub); ok {
		return t
	}
	t := collectors.ClassifyStatement(sql)
	if t == collectors.StatementOther && strings.EqualFold(statement, "DDL") {
		return collectors.StatementDDL
	}
	return t
}
