// Command floe is a query-telemetry-driven layout optimizer and maintenance
// control plane for Apache Iceberg tables. See README.md for a tour.
package main

import "os"

func main() { os.Exit(Main()) }
