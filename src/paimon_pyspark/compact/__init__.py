"""Compaction: planners (universal, full, append small files) and the rewriters of one bucket.

``plan.plan_compaction`` turns a table into independent ``CompactTask``s, ``plan.run_task``
runs one and returns its CommitMessage; ``paimon_pyspark.procedures.compact`` and its Spark
twin drive them and commit once.
"""
