import subprocess
import sys

import toolscout


def test_exports_are_exactly_the_public_api():
    assert sorted(toolscout.__all__) == sorted(
        [
            "Annotations", "CallResult", "Catalog", "CatalogChange", "DeferPolicy", "ErrorInfo",
            "FindResult", "Gateway", "Policy", "Session", "Tool", "ToolReference", "ToolscoutError",
            "__version__",
        ]
    )
    for name in toolscout.__all__:
        assert hasattr(toolscout, name)


def test_core_import_pulls_no_optional_runtime():
    code = (
        "import sys, toolscout, toolscout.cli;"
        "heavy = {'onnxruntime', 'tokenizers', 'torch', 'openai', 'anthropic', 'google.genai', 'langchain_core', 'matplotlib'};"
        "print(sorted(heavy & set(sys.modules)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
