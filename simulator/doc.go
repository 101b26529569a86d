// Package simulator projects how a candidate layout of an Iceberg table would serve the
// workload recorded in query telemetry, without moving any data.
//
// This file set holds the layout vocabulary ([Layout], [ParseLayout]) and the
// order-preserving row keys every layout shares.
package simulator
