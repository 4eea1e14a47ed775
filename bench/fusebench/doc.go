// Package fusebench is `strata bench fuse`: the same operations made in a
// directory of a `strata mount` and in a local directory on the same disk,
// in one run, side by side with their ratio. Sequential reads of a file
// the worker has cached (one reader, 8 readers of one file, 8 readers of
// 8 files), a `cp` of a local file into the mount against `strata fs
// -put` of the same file, creates, stats and 4 KiB-file reads per second, and a `tar -x` of many
// small files. It measures; it asserts nothing.
package fusebench
