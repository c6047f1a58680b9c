"""Render every real tool in every format and check the output against the provider types.

For each evaluation set: Gemini declarations validated by google-genai's
``FunctionDeclaration`` (extra fields forbidden), MCP tools by ``mcp.types.Tool``; how many
schemas OpenAI strict mode takes as is, after ``openai_strict``, or not at all (top
reasons); how many names need a wire name; render time per tool.

    .venv/bin/python benchmarks/format_coverage.py
"""

from __future__ import annotations

import collections
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _report import DATA, SETS, write_section
from toolscout.formats import FORMATS, openai_strict_reason, render, strict_refusal, wire_name
from toolscout.sources.declarations import load_declarations


def main() -> None:
    try:
        from google.genai import types as genai
    except ImportError:  # the gemini extra is optional
        genai = None
    from mcp.types import Tool as McpTool

    rows = ["| set | tools | gemini rejected | mcp rejected | strict as is | strict after conversion | "
            "strict refused | wire-named | render all formats, µs/tool |", "|---|---|---|---|---|---|---|---|---|"]
    reasons: collections.Counter[str] = collections.Counter()
    for name in SETS:
        tools, _ = load_declarations(DATA / name / "tools.jsonl", skip_invalid=True)
        t0 = time.perf_counter()
        for tool in tools:
            for fmt in FORMATS:
                render(tool, fmt)
        per_tool = (time.perf_counter() - t0) / max(1, len(tools)) * 1e6
        bad_gemini = bad_mcp = as_is = converted = refused = renamed = 0
        for tool in tools:
            if genai is not None:
                try:
                    genai.FunctionDeclaration.model_validate(render(tool, "gemini"))
                except Exception:
                    bad_gemini += 1
            try:
                McpTool.model_validate(render(tool, "mcp"))
            except Exception:
                bad_mcp += 1
            if strict_refusal(tool.input_schema) is None:
                as_is += 1
            elif (why := openai_strict_reason(tool.input_schema)) is None:
                converted += 1
            else:
                refused += 1
                reasons[why.split(": ", 1)[-1]] += 1
            renamed += wire_name(tool.name, "openai") != tool.name
        rows.append(
            f"| {name} | {len(tools):,} | {bad_gemini if genai else 'n/a'} | {bad_mcp} | {as_is:,} | "
            f"{converted:,} | {refused:,} | {renamed:,} | {per_tool:.0f} |"
        )
    top = ", ".join(f"{why} ({n})" for why, n in reasons.most_common(4))
    body = "\n".join([*rows, "", f"Strict-mode refusals, top reasons: {top}."])
    print(body)
    write_section("format_coverage", "Formats on real tools", "python benchmarks/format_coverage.py", body)


if __name__ == "__main__":
    main()
