"""The upstream HTTP client sends each request in one write (issue 36,
:mod:`toolscout.sources.mcp.http_client`): a server blocked in ``recv`` gets the request's
headers and body in its first read, and keep-alive still works."""

from __future__ import annotations

import socket
import threading

from toolscout.sources.mcp.http_client import pooled_client

BODY = b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}'
ANSWER = b'HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 11\r\n\r\n{"ok":true}'


def _serve(listener: socket.socket, first_reads: list[bytes], connections: list[int]) -> None:
    """A server in its own thread, waiting in ``recv``: it wakes at the first bytes that arrive."""
    while True:
        try:
            conn, _ = listener.accept()
        except OSError:
            return
        connections.append(1)
        with conn:
            while True:
                chunk = conn.recv(65536)
                if not chunk:
                    break
                first_reads.append(chunk)
                while not chunk.endswith(BODY):  # the rest of this request, if it came apart
                    more = conn.recv(65536)
                    if not more:
                        return
                    chunk += more
                conn.sendall(ANSWER)


async def test_a_request_reaches_the_server_in_one_piece_and_the_connection_is_kept() -> None:
    first_reads: list[bytes] = []
    connections: list[int] = []
    listener = socket.create_server(("127.0.0.1", 0))
    thread = threading.Thread(target=_serve, args=(listener, first_reads, connections), daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{listener.getsockname()[1]}/mcp"
    try:
        async with pooled_client() as http:
            for _ in range(20):
                response = await http.post(url, content=BODY, headers={"content-type": "application/json"})
                assert response.json() == {"ok": True}
    finally:
        listener.close()
    assert len(connections) == 1
    assert len(first_reads) == 20
    assert all(read.startswith(b"POST /mcp") and read.endswith(BODY) for read in first_reads), first_reads
