"""Compaction: planners (universal, full, append small files) and the rewriters of one bucket.

``plan.plan_compaction`` turns a table into independent ``CompactTask``s, ``plan.run_task``
runs one and returns its CommitMessage; ``sort`` is the sort compaction (``order_strategy``)
of bucket-unaware append tables, one task per partition; ``paimon_pyspark.procedures.compact``
and its Spark twin drive them and commit once.
"""
