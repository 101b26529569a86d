// Package spark is floe's Spark engine: it runs the maintenance steps
// floe planned as Iceberg's Spark procedures, over Spark Connect.
package spark
