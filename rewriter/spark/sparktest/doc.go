// Package sparktest is an in-process Spark Connect server for tests of
// floe's Spark engine, driven by the real spark-connect-go client.
//
// It holds no copy of Spark Connect's .proto files or generated code:
// linking github.com/apache/spark-connect-go/spark/sql (which this package
// does, for [Server.Session]) registers the service
// spark.connect.SparkConnectService and its messages in the protobuf
// global registry, so the server looks the method descriptors up by name,
// reads and writes every message as a dynamicpb.Message, and serves every
// method through one grpc.UnknownServiceHandler on a loopback listener.
// (Registering the same names a second time from a copy would panic at
// start-up.)
//
// ExecutePlan answers a SQL command as Spark Connect does: a command
// (CALL …) runs at once and its rows come back inline, as an Arrow IPC
// local relation in the SqlCommandResult; a query (SELECT …) comes back as
// a SQL relation. The client then executes that relation and the server
// streams its rows as one Arrow batch. Every response echoes the session
// and operation ids, and each stream ends with ResultComplete. A failing
// statement ends as a gRPC status carrying Spark's message and an
// ErrorInfo detail with the error class and SQL state, which the client
// reads. A blocking statement runs until an Interrupt names it (by
// operation id, tag or session) or its stream is cancelled.
//
// The server records the SQL of each command, every operation (with its
// tags, and whether it was interrupted or cancelled), every Interrupt,
// every released session and every authorization header.
package sparktest
