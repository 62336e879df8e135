"""Log a few lines on stderr (one of them not valid UTF-8), then echo stdin to stdout."""

import sys

sys.stderr.buffer.write(b"hello on stderr\nsecond line\r\nbad byte \xff here\nlast\n")
sys.stderr.buffer.flush()
for line in sys.stdin.buffer:
    sys.stdout.buffer.write(line)
    sys.stdout.buffer.flush()
