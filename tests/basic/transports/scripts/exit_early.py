"""Say goodbye on stderr, close stdout, and exit with status 3 without reading stdin."""

import sys

sys.stderr.write("going away\n")
sys.stderr.flush()
sys.exit(3)
