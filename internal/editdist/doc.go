// Package editdist measures how far apart two names are (Levenshtein
// distance), for the "did you mean" of policy keys, configuration keys and
// table names.
package editdist
