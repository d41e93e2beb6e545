"""Providers: the SDKs that call models, behind one :class:`Provider` protocol.

:func:`provider_for` hands out one provider (one SDK client, one connection pool) per
provider kind, base URL and key, per event loop: an SDK client's connections belong to the
loop that opened them, so a client is never shared across loops. :func:`close_providers`
closes the current loop's clients; call it before the loop ends.
"""

from __future__ import annotations

import asyncio

from seatrial.gateway._config import ModelConfig
from seatrial.gateway._providers._anthropic import AnthropicProvider
from seatrial.gateway._providers._base import Provider, api_key
from seatrial.gateway._providers._litellm import LiteLLMProvider
from seatrial.gateway._providers._openai import OpenAIProvider

_Key = tuple[str, str | None, str | None, str]
_providers: dict[_Key, tuple[asyncio.AbstractEventLoop | None, Provider]] = {}


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def provider_for(model: ModelConfig) -> Provider:
    """The provider that calls ``model``, shared with every model of the same endpoint and key.

    Raises ProviderError (``bad_request``) when the model's key variable is not set, and
    GatewayError when the provider's optional SDK is not installed.
    """
    key = api_key(model)
    # The key itself is part of the cache key (in memory only) so a rotated key takes effect.
    cache_key: _Key = (model.provider, model.base_url, model.api_key_env, key)
    loop = _running_loop()
    cached = _providers.get(cache_key)
    if cached is not None and cached[0] is loop:
        return cached[1]
    provider: Provider
    if model.provider == "anthropic":
        provider = AnthropicProvider(base_url=model.base_url, key=key)
    elif model.provider == "litellm":
        provider = LiteLLMProvider(base_url=model.base_url, key=key)
    else:
        provider = OpenAIProvider(base_url=model.base_url, key=key)
    _providers[cache_key] = (loop, provider)
    return provider


async def close_providers() -> None:
    """Close and forget the providers made in this event loop (or outside any loop).

    Those of other loops are left to their loops: their connections cannot be closed here.
    """
    loop = _running_loop()
    mine = [key for key, (owner, _) in _providers.items() if owner is loop or owner is None]
    for key in mine:
        _, provider = _providers.pop(key)
        await provider.aclose()


__all__ = [
    "AnthropicProvider",
    "LiteLLMProvider",
    "OpenAIProvider",
    "Provider",
    "close_providers",
    "provider_for",
]
