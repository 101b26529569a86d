package control

import "strings"

// ShellArg returns s as one POSIX shell word for the commands floe
// suggests ("re-plan: floe plan …"): as is when it holds only characters
// no shell treats specially, else in single quotes, so a table name such
// as local.db."my.table" is pasted back with its double quotes intact.
func ShellArg(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_-.,:/@%+=", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
