// Command floe is a query-telemetry-driven layout optimizer and maintenance
// control plane for Apache Iceberg tables. See README.md for a tour.
//
// One file per verb (analyze.go, simulate.go, plan.go, plan_list.go, …,
// compact.go, expire.go, orphans.go, rewrite_manifests.go, optimize.go,
// runs.go, demo.go). A verb only parses its flags, calls one use case of
// package control and renders the result; verbs never call each other —
// floe demo calls control and shares the verbs' render helpers
// (renderHealth, renderAnalysis, …). The shared plumbing is in factory.go
// (config, catalogs, store), load.go (tables), workload.go (workload and
// projection flags), flags.go, output.go and exit.go.
package main

import "os"

func main() { os.Exit(Main()) }
