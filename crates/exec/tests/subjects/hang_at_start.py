"""A subject that never answers the handshake."""
import sys
import time

sys.stdin.readline()
while True:
    time.sleep(60)
