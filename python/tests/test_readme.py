"""The README's twenty-line adapter is examples/adapter.py (which python/ci.sh certifies)."""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_readme_adapter_is_the_example():
    readme = (ROOT / "README.md").read_text()
    shown = re.search(r"## An adapter in twenty lines.*?```python\n(.*?)```", readme, re.S).group(1)
    example = (ROOT / "examples" / "adapter.py").read_text()
    body = example.split('"""', 2)[2].lstrip("\n")  # without the docstring
    assert shown == body
    assert len(body.strip().splitlines()) <= 25
