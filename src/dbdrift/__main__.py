"""`python -m dbdrift` is the `dbdrift` command."""
import sys

from dbdrift.cli.main import main

sys.exit(main())
