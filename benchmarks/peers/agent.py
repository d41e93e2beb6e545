"""The benchmark's agent: the agent protocol over HTTP/1.1 on raw asyncio, answering after 50 ms.

Every tool under test talks to this one server, in a process of its own, so its CPU is never
counted as a tool's. It is kept lean (no framework) so that at 64 requests in flight it takes
little of the machine's two cores from the tool being measured. It answers any POST with
``{"response": "Order A<digits> is shipped.", ...}``, the digits taken from the message, so a
``contains: shipped`` and a ``regex: Order A\\d+ is (shipped|delivered)`` both pass.

    python benchmarks/peers/agent.py PORT [LATENCY_S]
"""

from __future__ import annotations

import asyncio
import json
import re
import socket
import sys

_DIGITS = re.compile(r"\d+")


def answer(body: bytes) -> bytes:
    """The JSON answer to one request body."""
    request = json.loads(body or b"{}")
    message = str(request.get("message", ""))
    found = _DIGITS.search(message)
    reply = {
        "session_id": request.get("session_id", ""),
        "response": f"Order A{found.group() if found else '0'} is shipped.",
        "finished": True,
        "tools_called": [],
    }
    return json.dumps(reply).encode()


async def handle(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, latency_s: float
) -> None:
    """Serve one connection's requests in turn until the client closes it."""
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n")[1:]:
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            body = await reader.readexactly(length) if length else b""
            await asyncio.sleep(latency_s)
            payload = answer(body)
            writer.write(
                b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                b"content-length: " + str(len(payload)).encode() + b"\r\n\r\n" + payload
            )
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        writer.close()


async def serve(port: int, latency_s: float) -> None:
    """Listen on 127.0.0.1:``port`` until killed."""
    server = await asyncio.start_server(
        lambda r, w: handle(r, w, latency_s), "127.0.0.1", port, backlog=4096
    )
    for sock in server.sockets:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(serve(int(sys.argv[1]), float(sys.argv[2]) if len(sys.argv) > 2 else 0.05))
