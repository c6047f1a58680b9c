"""A stdio MCP server that reports the credential its environment carries and its process id.

The gateway starts one per user for a ``per-user`` stdio upstream (``tokenEnv``): ``whoami``
answers ``"<$USER_TOKEN> <pid>"`` (or, given ``{"name": "X"}``, the value of ``$X``), so a test sees whose secret each process got and that
each user has their own process. A plain JSON-RPC loop over stdin/stdout (the protocol's
initialize, tools/list and tools/call): it starts in milliseconds, where importing the SDK
takes seconds on a busy machine.
"""

from __future__ import annotations

import json
import os
import sys

WHOAMI = {"name": "whoami", "description": "Report this process's user token and pid.",
          "inputSchema": {"type": "object", "properties": {}}}


def main() -> None:
    for line in sys.stdin:
        message = json.loads(line)
        if "id" not in message or "method" not in message:
            continue
        method, result = message["method"], {}
        if method == "initialize":
            result = {"protocolVersion": message["params"]["protocolVersion"], "capabilities": {"tools": {}},
                      "serverInfo": {"name": "env-whoami", "version": "1.0"}}
        elif method == "tools/list":
            result = {"tools": [WHOAMI]}
        elif method == "tools/call":
            name = (message["params"].get("arguments") or {}).get("name")
            text = os.environ.get(name, "-") if name else f"{os.environ.get('USER_TOKEN', '-')} {os.getpid()}"
            result = {"content": [{"type": "text", "text": text}]}
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
