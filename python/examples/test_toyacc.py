"""Certifies toyacc with toolcert from pytest: one test per invariant."""
import os
import sys

from toolcert_adapter.pytest_plugin import certify_tests

HERE = os.path.dirname(os.path.abspath(__file__))
FLAGS = os.environ.get("TOYACC_FLAGS", "")
test_toyacc = certify_tests(
    f"{sys.executable} {HERE}/adapter.py {FLAGS}", cases=int(os.environ.get("CASES", "300")), schema=False
)
