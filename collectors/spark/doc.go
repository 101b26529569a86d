// Package spark reads Spark event logs into [collectors.QueryEvent]s
// (source spark-eventlog): single files or rolling eventlog_v2_*
// directories, plain or zstd/gzip, finished or .inprogress.
//
// One event per SQL execution, QueryID "<appId>/<executionId>", folded from
// SparkListenerSQLExecutionStart, every SparkListenerSQLAdaptiveExecutionUpdate
// (AQE re-plans), SparkListenerDriverAccumUpdates and
// SparkListenerSQLExecutionEnd (errorMessage, or a failed job of the
// execution, makes it FAILED). Task input bytes, rows and CPU are summed
// through the job → stage → task links. Nested executions (CTAS and
// friends, rootExecutionId ≠ executionId) carry RootQueryID and are skipped
// when they scan nothing.
//
// SQL is the execution's sqlText when the Spark version records one, else
// its description when that is a statement (Thrift server, spark-sql); for
// DataFrame jobs it is empty and only the plan speaks.
//
// Tables come from Iceberg BatchScan nodes of the plan (sparkPlanInfo, or
// the formatted plan text): "[filters=…]" is parsed by [ParseFilters] into
// TableAccess.Filter with evidence pushed-filter. Iceberg prints DATE
// literals as day numbers and TIMESTAMP literals as epoch microseconds; the
// log does not say which columns are dates, so those literals stay Kind
// number and ingestion re-types them against the Iceberg schema with
// [RetypeFilter].
package spark
