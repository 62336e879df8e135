"""A server that does not exit when its stdin closes.

    stubborn_server.py needs-term    dies on SIGTERM (the default action)
    stubborn_server.py ignore-term   ignores SIGTERM too; only SIGKILL ends it

Writes "ready" on stdout once its signal handling is in place.
"""

import signal
import sys
import time

if sys.argv[1] == "ignore-term":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
sys.stdout.write("ready\n")
sys.stdout.flush()
sys.stdin.read()  # returns at EOF; we stay anyway
while True:
    time.sleep(60)
