package polaris

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
)

// The four predefined Polaris policy types floe reads. All four are
// inheritable (polaris-core PredefinedPolicyTypes).
const (
	TypeSnapshotExpiry     = "system.snapshot-expiry"
	TypeOrphanFileRemoval  = "system.orphan-file-removal"
	TypeDataCompaction     = "system.data-compaction"
	TypeMetadataCompaction = "system.metadata-compaction"
)

// Types lists the policy types floe reads, in the order [Settings] emits
// them.
func Types() []string {
	return []string{TypeSnapshotExpiry, TypeOrphanFileRemoval, TypeDataCompaction, TypeMetadataCompaction}
}

// ContentVersion is the only content schema version Polaris defines for
// the four types (schemas/policies/system/*/2025-02-03.json).
const ContentVersion = "2025-02-03"

// Level is where a policy is attached: the catalog, a namespace or the
// table itself.
type Level string

// The attachment levels, from the widest to the narrowest. A narrower one
// overrides a wider one.
const (
	LevelCatalog   Level = "catalog"
	LevelNamespace Level = "namespace"
	LevelTable     Level = "table"
)

// Policy is one policy in effect on a table, as GET applicable-policies
// returns it (the ApplicablePolicy schema), plus where it is attached.
type Policy struct {
	// Type is policy-type, e.g. system.data-compaction.
	Type string `json:"policy-type"`
	// Name is unique within Namespace.
	Name string `json:"name"`
	// Description is free text.
	Description string `json:"description,omitempty"`
	// Content is the policy's content, a JSON document held as a string;
	// see [ParseContent].
	Content string `json:"content,omitempty"`
	// Version counts the policy's updates, from 0.
	Version int `json:"version"`
	// Inheritable is true for all four maintenance types.
	Inheritable bool `json:"inheritable"`
	// Inherited is true when the policy is attached to a parent of the
	// resource asked about, not to the resource itself.
	Inherited bool `json:"inherited"`
	// Namespace is the namespace the policy is stored in (the spec's "parent
	// path to the policy"), which need not be where it is attached.
	Namespace []string `json:"namespace"`

	// Level is where the policy is attached; the client resolves it (it is
	// not a wire field).
	Level Level `json:"-"`
	// AttachedTo is the attachment target's path: empty for the catalog,
	// the namespace for a namespace, namespace and table name for a table.
	AttachedTo []string `json:"-"`
}

// Ref names the policy for messages: "name (type)".
func (p Policy) Ref() string { return fmt.Sprintf("%s (%s)", p.Name, p.Type) }

// where names the attachment for messages: "on namespace web".
func (p Policy) where() string {
	switch p.Level {
	case LevelCatalog:
		return "on the catalog"
	case LevelNamespace:
		return "on namespace " + strings.Join(p.AttachedTo, ".")
	case LevelTable:
		return "on table " + strings.Join(p.AttachedTo, ".")
	}
	return "at an unknown level"
}

// Content is a maintenance policy's parsed content.
type Content struct {
	// Version is the content's schema version; empty when not given.
	Version string
	// Enable is the one required field: whether the maintenance runs.
	Enable bool
	// MaxOrphanFileAgeDays is system.orphan-file-removal's
	// max_orphan_file_age_in_days; nil when not given.
	MaxOrphanFileAgeDays *float64
	// Locations is system.orphan-file-removal's locations.
	Locations []string
	// Config is the free map of string, number (as json.Number) and
	// boolean values.
	Config map[string]any
	// Unknown lists top-level fields the type's schema does not define,
	// sorted.
	Unknown []string
}

// ParseContent reads the content of a policy of type policyType. It fails,
// wrapping [ErrBadContent], when the content is not a JSON object, has no
// boolean enable, names a version other than [ContentVersion], or a field
// has a type the schema does not allow. Fields the schema does not define
// are listed in Content.Unknown, not rejected: the caller warns about them.
func ParseContent(policyType, content string) (Content, error) {
	var c Content
	bad := func(format string, args ...any) (Content, error) {
		return Content{}, fmt.Errorf("%w: %s", ErrBadContent, fmt.Sprintf(format, args...))
	}
	if strings.TrimSpace(content) == "" {
		return bad("content is empty; enable is required")
	}
	dec := json.NewDecoder(strings.NewReader(content))
	dec.UseNumber()
	var top map[string]json.RawMessage
	if err := dec.Decode(&top); err != nil {
		return bad("content is not a JSON object: %v", err)
	}
	if top == nil {
		return bad("content is not a JSON object: null")
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return bad("content has data after its JSON object")
	}
	raw, ok := top["enable"]
	if !ok {
		return bad("enable is required")
	}
	if err := json.Unmarshal(raw, &c.Enable); err != nil || isNull(raw) {
		return bad("enable: want true or false, got %s", short(raw))
	}
	for _, k := range sortedKeys(top) {
		raw := top[k]
		switch {
		case k == "enable":
		case k == "version":
			if err := json.Unmarshal(raw, &c.Version); err != nil || isNull(raw) {
				return bad("version: want a string, got %s", short(raw))
			}
			if c.Version != ContentVersion {
				return bad("version %q: floe reads schema version %s only", c.Version, ContentVersion)
			}
		case k == "config":
			cfg, err := parseConfig(raw)
			if err != nil {
				return bad("config: %v", err)
			}
			c.Config = cfg
		case k == "max_orphan_file_age_in_days" && policyType == TypeOrphanFileRemoval:
			n, err := number(raw)
			if err != nil {
				return bad("max_orphan_file_age_in_days: %v", err)
			}
			c.MaxOrphanFileAgeDays = &n
		case k == "locations" && policyType == TypeOrphanFileRemoval:
			if err := json.Unmarshal(raw, &c.Locations); err != nil || isNull(raw) {
				return bad("locations: want a list of strings, got %s", short(raw))
			}
		default:
			c.Unknown = append(c.Unknown, k)
		}
	}
	return c, nil
}

// parseConfig reads the free config map: values are strings, numbers or
// booleans (the schemas' additionalProperties).
func parseConfig(raw json.RawMessage) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil || m == nil {
		return nil, fmt.Errorf("want an object of strings, numbers and booleans, got %s", short(raw))
	}
	for _, k := range sortedKeys(m) {
		switch m[k].(type) {
		case string, json.Number, bool:
		default:
			return nil, fmt.Errorf("%s: want a string, number or boolean", k)
		}
	}
	return m, nil
}

// number reads a JSON number.
func number(raw json.RawMessage) (float64, error) {
	var n json.Number
	if err := json.Unmarshal(raw, &n); err != nil || isNull(raw) {
		return 0, fmt.Errorf("want a number, got %s", short(raw))
	}
	return numberValue(n)
}

func numberValue(n json.Number) (float64, error) {
	f, err := n.Float64()
	if err != nil {
		return 0, fmt.Errorf("%s is not a finite number", n)
	}
	return f, nil
}

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

// short quotes raw JSON for a message, cut to a readable length.
func short(raw json.RawMessage) string {
	s := string(bytes.TrimSpace(raw))
	if len(s) > 40 {
		s = s[:40] + "…"
	}
	return s
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// isMaintenanceType reports whether floe reads policies of type t.
func isMaintenanceType(t string) bool { return slices.Contains(Types(), t) }
