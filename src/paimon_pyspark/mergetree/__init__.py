"""The LSM merge tree of primary-key tables: ordering of records and the merge engines."""
