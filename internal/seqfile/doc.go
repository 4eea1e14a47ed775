// Package seqfile reads Hadoop's SequenceFile (version 6, the format
// Hadoop 2 and 3 write) as FsShell's -text shows it: each record as its
// key's toString, a tab, its value's toString and a newline. Records may be
// uncompressed, or compressed record by record or in blocks with Hadoop's
// DefaultCodec (zlib), GzipCodec or BZip2Codec.
//
// It knows the common Writables of org.apache.hadoop.io (Text, the numeric
// ones, BooleanWritable, BytesWritable, NullWritable, MD5Hash) and prints
// them as their toString does; a file of any other key or value class, or
// of another codec (Snappy, LZ4, Zstandard need native code), is refused
// with an error naming it, before any record is printed. It is not a
// writer, and it does not check sync markers beyond finding them.
//
// The format (SequenceFile.java): "SEQ", version 6, the key and value class
// names (Text strings: a vint length and UTF-8), two booleans (compressed,
// block-compressed), the codec's class name if compressed, the metadata
// (an int count of Text pairs) and a 16-byte sync marker. Then records: an
// int record length (-1 escapes a sync marker), an int key length, the key,
// the value (compressed alone in a record-compressed file); or, block
// compressed, after each sync marker a block: a vint record count and four
// compressed buffers (key lengths as vints, keys, value lengths, values),
// each a vint length and its bytes. Ints are big-endian; vints are
// Hadoop's WritableUtils encoding.
package seqfile
