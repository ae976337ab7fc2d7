"""A subject that dies before it says anything."""
import sys

print("exit-at-start: cannot import my_accumulator (ModuleNotFoundError)", file=sys.stderr)
sys.exit(3)
