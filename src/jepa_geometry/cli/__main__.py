"""``python -m jepa_geometry.cli``: the command line, as the ``jepa-geometry`` script runs it."""

import sys

from jepa_geometry.cli import main

sys.exit(main())
