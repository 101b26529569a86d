package analyzer

import (
	"fmt"
	"math"
	"strings"

	"github.com/apache/iceberg-go"
)

// Partition discounts other than the configurable full one.
const (
	// coarsePartitionDiscount applies to bucket and truncate partitions:
	// they prune an equality to one bucket or prefix, but a bucket still
	// holds many values that sorting inside it separates.
	coarsePartitionDiscount = 0.5
	// unknownWidthFraction is the width assumed for a range with an
	// unknown literal on a time-partitioned column: at least a partition.
	unknownWidthFraction = 1.0
)

// partitioning is how the current partition spec transforms one column.
type partitioning struct {
	transforms []iceberg.Transform
}

// partitionOf lists the non-void transforms of the current spec on the
// column with field id fid.
func (s *Stats) partitionOf(fid int) partitioning {
	var p partitioning
	if s.st == nil {
		return p
	}
	if p, ok := s.parts[fid]; ok {
		return p
	}
	defer func() { s.parts[fid] = p }()
	spec := s.st.Metadata.PartitionSpec()
	for _, f := range spec.Fields() {
		if f.SourceID() != fid {
			continue
		}
		if _, void := f.Transform.(iceberg.VoidTransform); void {
			continue
		}
		p.transforms = append(p.transforms, f.Transform)
	}
	return p
}

func (p partitioning) String() string {
	parts := make([]string, len(p.transforms))
	for i, t := range p.transforms {
		parts[i] = t.String()
	}
	return strings.Join(parts, ", ")
}

// granularity is the width of one partition of a time transform in the
// column's units, or 0 for other transforms.
func granularity(t iceberg.Transform, cls class) float64 {
	day := 86400e6
	if cls == clsDate {
		day = 1
	}
	switch t.(type) {
	case iceberg.HourTransform:
		if cls == clsDate {
			return 1
		}
		return 3600e6
	case iceberg.DayTransform:
		return day
	case iceberg.MonthTransform:
		return day * 365.2425 / 12
	case iceberg.YearTransform:
		return day * 365.2425
	}
	return 0
}

// discount is the factor applied to leaf l's benefit because partition
// pruning already gets it (1: no discount). full is the factor for a
// predicate partitions prune as well as a layout would.
func (s *Stats) discount(l *leaf, p partitioning, full float64) float64 {
	best := 1.0
	c := s.column(l.column)
	for _, t := range p.transforms {
		d := 1.0
		switch t.(type) {
		case iceberg.IdentityTransform:
			switch l.kind {
			case kindEq, kindRange, kindNull:
				d = full
			}
		case iceberg.BucketTransform:
			if l.kind == kindEq {
				d = coarsePartitionDiscount
			}
		case iceberg.TruncateTransform:
			if l.kind == kindEq || l.kind == kindRange {
				d = coarsePartitionDiscount
			}
		case iceberg.YearTransform, iceberg.MonthTransform, iceberg.DayTransform, iceberg.HourTransform:
			if c == nil {
				break
			}
			g := granularity(t, c.cls)
			switch l.kind {
			case kindEq:
				// A point is finer than any partition: sorting within
				// the partition finds it.
			case kindRange:
				frac := 0.0
				if l.unknown > 0 {
					frac = unknownWidthFraction
				}
				for _, iv := range l.ivs {
					w, ok := c.width(iv)
					if !ok {
						frac = unknownWidthFraction
						break
					}
					frac = math.Max(frac, w/g)
				}
				d = 1 - (1-full)*math.Min(1, frac)
			case kindNull:
				d = full
			}
		}
		best = math.Min(best, d)
	}
	return best
}

// describeDiscount says why a column's benefit was discounted.
func describeDiscount(p partitioning, factor float64) string {
	return fmt.Sprintf("partitioned by %s, which already prunes (benefit ×%.2f)", p, factor)
}
