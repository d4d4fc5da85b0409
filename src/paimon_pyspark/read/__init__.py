"""Reading tables: scan planning, splits, predicates and merge-on-read."""
