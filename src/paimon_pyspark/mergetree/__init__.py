"""The LSM tree of one primary-key bucket: levels, universal picks, sorted-run writing and one
bucket's compaction (org.apache.paimon.mergetree)."""
