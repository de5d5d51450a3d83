"""Fixtures for the chat client tests: the chat-completions stub server."""

from tests.support.openai_stub import openai_stub

__all__ = ["openai_stub"]
