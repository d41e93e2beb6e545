"""Test doubles for testing agents and Seatrial itself, like httpx's ``MockTransport``.

:class:`AgentServer` is a real HTTP server speaking the agent protocol on 127.0.0.1;
:class:`FakeOpenAI` and :class:`FakeAnthropic` are real model API servers on 127.0.0.1,
scripted with :class:`FakeReply` answers.
"""

from seatrial.testing._agent_server import AgentRequest, AgentServer, Hang, HttpReply
from seatrial.testing._fake_models import FakeAnthropic, FakeOpenAI, ModelRequest
from seatrial.testing._fake_wire import FakeReply, FakeToolCall, fake_embedding

__all__ = [
    "AgentRequest",
    "AgentServer",
    "FakeAnthropic",
    "FakeOpenAI",
    "FakeReply",
    "FakeToolCall",
    "Hang",
    "HttpReply",
    "ModelRequest",
    "fake_embedding",
]
