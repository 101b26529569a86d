// Package lake connects floe to Iceberg catalogs and reads what a table is
// made of: its data and delete files with their statistics, snapshots,
// manifests and partitions ([State]), and from that the table's health
// ([Health]).
//
// A table is named by an [Ident], whose [Ident.String] is floe's one text
// form of a table name: parts joined with dots, a part that holds a dot, a
// double quote or white space (or is empty) in double quotes, SQL-style
// (local.db."my.table"). [ParseIdent] reads it back to the same Ident, so
// every name a catalog can hold can be typed, routed, matched and stored.
//
// Every other stage uses lake; lake imports none of them. It reads metadata
// — manifest lists and manifests, never data files — and reads each
// manifest of the current snapshot exactly once, in parallel. The one
// exception is a delete the metadata cannot judge: a position delete file
// that applies to no live data file by its partition (dead, or misfiled:
// its content says which), or one a deletion vector may shadow; those few
// delete files, and the vectors involved, are read ([DeleteIssue]).
//
// Deletes are counted and named one by one: a position or equality delete
// file, or one deletion vector. One Puffin file holds the vectors of many
// data files, each its own manifest entry under the file's path, so a
// delete is named by its [DeleteKey] (path, referenced data file, blob
// offset), never by its path.
//
// Manifests are read by a [ManifestReader], which returns the entries
// iceberg-go's reader returns but parses each distinct Avro schema once:
// iceberg-go parses the schema in every manifest's header anew, most of the
// CPU of reading a small manifest, while the manifests of a table, and of
// tables of one partition type, carry the same schema text. A manifest it
// does not handle (a codec other than null, deflate or snappy) is read by
// iceberg-go's reader.
//
// iceberg-go's scan planning splits a Parquet file larger than
// read.split.target-size into several tasks that share one DataFile; lake
// never plans scans for metadata, it walks the manifests, so every data file
// appears once, keyed by path.
package lake
