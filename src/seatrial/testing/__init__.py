"""Test doubles for testing agents and Seatrial itself, like httpx's ``MockTransport``.

:class:`AgentServer` is a real HTTP server speaking the agent protocol on 127.0.0.1.
"""

from seatrial.testing._agent_server import AgentRequest, AgentServer, Hang, HttpReply

__all__ = ["AgentRequest", "AgentServer", "Hang", "HttpReply"]
