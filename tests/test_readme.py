"""The README's library example runs and prints what its comments say."""

import contextlib
import io
import re

from _paths import ROOT

README = ROOT / "README.md"


def test_library_example_runs():
    block = re.search(r"## Use it as a library\n\n```python\n(.*?)```", README.read_text(), re.S)
    assert block is not None
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(block.group(1), "README.md", "exec"), {})
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("get_forecast ")
    assert lines[1] == "True {'city': 'Lisbon', 'days': 3, 'forecast': 'sunny'}"
    assert lines[2:] == ["invalid_arguments", "empty_query"]
