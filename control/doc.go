// Package control is floe's control plane: it wires the stages together.
// Its sub-packages hold the configuration (config), the state store
// (store), telemetry ingestion (ingest) and the demo warehouse (demo);
// this package holds the explicit wiring lists, such as [Parsers].
package control
