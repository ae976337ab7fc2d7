"""A hostile subject for tests/verdicts.rs: proxies the subprocess protocol to the adapter
given as arguments, and exits with status 7 when the second `run` request arrives."""
import os
import subprocess
import sys

child = subprocess.Popen(sys.argv[1:], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
runs = 0
for line in sys.stdin:
    if '"cmd": "run"' in line or '"cmd":"run"' in line:
        runs += 1
        if runs == 2:
            os._exit(7)
    child.stdin.write(line)
    child.stdin.flush()
    reply = child.stdout.readline()
    if not reply:
        os._exit(8)
    sys.stdout.write(reply)
    sys.stdout.flush()
