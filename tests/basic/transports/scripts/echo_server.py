"""Echo every line of stdin back on stdout; exit 0 when stdin ends."""

import sys

for line in sys.stdin.buffer:
    sys.stdout.buffer.write(line)
    sys.stdout.buffer.flush()
