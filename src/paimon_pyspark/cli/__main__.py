"""``python -m paimon_pyspark.cli``."""

import sys

from paimon_pyspark.cli import main

sys.exit(main())
