"""Providers: the SDKs that call models, behind one :class:`Provider` protocol.

A :class:`ProviderPool` belongs to one gateway: it makes each provider on first use and
closes what it made when the gateway closes, so no client outlives its gateway and tests
have nothing process-wide to reset.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping

from seatrial.errors import ConfigError
from seatrial.gateway._config import ModelConfig
from seatrial.gateway._providers._anthropic import AnthropicProvider
from seatrial.gateway._providers._base import Provider, api_key
from seatrial.gateway._providers._litellm import LiteLLMProvider
from seatrial.gateway._providers._openai import OpenAIProvider
from seatrial.gateway._routing import load_object
from seatrial.i18n import gettext as _

_Key = tuple[str, str | None, str | None, str]

_PROVIDER_METHODS = ("chat", "stream", "embed", "aclose")


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def new_provider(model: ModelConfig) -> Provider:
    """A new provider (its own SDK client) for ``model``; the caller closes it.

    Raises ProviderError (``bad_request``) when the model's key variable is not set,
    GatewayError when the provider's optional SDK is not installed, and ConfigError when a
    ``scripted`` model's ``base_url`` names no provider object.
    """
    if model.provider == "scripted":
        return _scripted(model)
    key = api_key(model)
    if model.provider == "anthropic":
        return AnthropicProvider(base_url=model.base_url, key=key)
    if model.provider == "litellm":
        return LiteLLMProvider(base_url=model.base_url, key=key)
    return OpenAIProvider(base_url=model.base_url, key=key)


def _scripted(model: ModelConfig) -> Provider:
    what = f"model `{model.name}` (provider scripted)"
    if model.base_url is None:
        raise ConfigError(
            _(
                "{what} names no script; set `base_url: python:module:NAME` to a "
                "seatrial.testing.ScriptedModel, or pass it to Gateway(providers=...)"
            ).format(what=what)
        )
    found = load_object(model.base_url, what)
    if not all(callable(getattr(found, m, None)) for m in _PROVIDER_METHODS):
        raise ConfigError(
            _(
                "{what}: `{spec}` is a {kind}, not a provider; name a "
                "seatrial.testing.ScriptedModel"
            ).format(what=what, spec=model.base_url, kind=type(found).__name__)
        )
    return found  # type: ignore[no-any-return]


class ProviderPool:
    """The providers of one gateway: one per provider kind, endpoint and key, per event loop.

    An SDK client's connections belong to the loop that opened them, so a client is never
    shared across loops. Providers handed in (``given``, by model name) are the caller's:
    they are used as they are and never closed here.
    """

    def __init__(self, given: Mapping[str, Provider] | None = None) -> None:
        self._given = dict(given or {})
        self._made: dict[_Key, tuple[asyncio.AbstractEventLoop | None, Provider]] = {}

    def provider_for(self, model: ModelConfig) -> Provider:
        """The provider that calls ``model``, shared with every model of the same endpoint
        and key (made on first use; errors as :func:`new_provider`)."""
        given = self._given.get(model.name)
        if given is not None:
            return given
        # The key itself is part of the pool key (in memory only) so a rotated key takes
        # effect; a scripted model is keyed by the object its spec names.
        key = model.base_url or "" if model.provider == "scripted" else api_key(model)
        pool_key: _Key = (model.provider, model.base_url, model.api_key_env, key)
        loop = _running_loop()
        made = self._made.get(pool_key)
        if made is not None and made[0] is loop:
            return made[1]
        provider = new_provider(model)
        self._made[pool_key] = (loop, provider)
        return provider

    async def aclose(self) -> None:
        """Close the providers this pool made in this event loop (or outside any loop).

        Those of other loops are dropped unclosed: their connections cannot be closed from
        here, and their loop closing ends them.
        """
        loop = _running_loop()
        made, self._made = self._made, {}
        for owner, provider in made.values():
            if owner is loop or owner is None:
                await provider.aclose()


__all__ = [
    "AnthropicProvider",
    "LiteLLMProvider",
    "OpenAIProvider",
    "Provider",
    "ProviderPool",
    "new_provider",
]
