"""Pure on-disk records and their codecs (no I/O): BinaryRow, murmur hash, metadata files."""
