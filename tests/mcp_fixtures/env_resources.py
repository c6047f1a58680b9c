"""A stdio MCP server whose resource and prompt say whose credential its process carries.

Like env_whoami.py (a plain JSON-RPC loop: it starts in milliseconds), plus a resource
``who://me`` and a prompt ``me`` whose text is ``$USER_TOKEN``: a test sees whether a
resource read or a prompt for a per-user server ran in that user's own process.
"""

from __future__ import annotations

import json
import os
import sys

WHOAMI = {"name": "whoami", "description": "Report this process's user token.",
          "inputSchema": {"type": "object", "properties": {}}}


def main() -> None:
    token = os.environ.get("USER_TOKEN", "-")
    for line in sys.stdin:
        message = json.loads(line)
        if "id" not in message or "method" not in message:
            continue
        method, result = message["method"], {}
        if method == "initialize":
            result = {"protocolVersion": message["params"]["protocolVersion"],
                      "capabilities": {"tools": {}, "resources": {}, "prompts": {}},
                      "serverInfo": {"name": "env-resources", "version": "1.0"}}
        elif method == "tools/list":
            result = {"tools": [WHOAMI]}
        elif method == "tools/call":
            result = {"content": [{"type": "text", "text": token}]}
        elif method == "resources/list":
            result = {"resources": [{"uri": "who://me", "name": "me", "mimeType": "text/plain"}]}
        elif method == "resources/read":
            result = {"contents": [{"uri": "who://me", "mimeType": "text/plain", "text": token}]}
        elif method == "prompts/list":
            result = {"prompts": [{"name": "me", "description": "Who am I."}]}
        elif method == "prompts/get":
            result = {"messages": [{"role": "user", "content": {"type": "text", "text": token}}]}
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
