"""Judging replies by meaning: embeddings for ``similar``, the LLM judge, and its agreement
with human labels.

Names are imported on first use: the bundled model loads only when a check needs it.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from seatrial.judge._embedding import (
        CACHE,
        MULTILINGUAL_MODEL,
        SEMANTIC_MODEL,
        STATIC_MODEL,
        Embedder,
        EmbeddingCache,
        UnembeddableText,
        UnknownEmbeddingModel,
        default_model,
        default_threshold,
        embedder_for,
        similarities,
        similarity,
        use_embedders,
    )
    from seatrial.judge._factuality import Claim, ClaimList, supported_share
    from seatrial.judge._gateway_embedder import GatewayEmbedder, use_gateway_embeddings
    from seatrial.judge._labels import (
        HumanLabel,
        Judgement,
        LabelSet,
        PredictionSet,
        load_labels,
        load_predictions,
        match_judgements,
    )
    from seatrial.judge._llm import Judge, model_family, parse_json_object
    from seatrial.judge._multilingual import E5Embedder, MissingModel
    from seatrial.judge._prompt import PromptTemplate, available_versions, load_prompt
    from seatrial.judge._semantic import MissingExtra, SentenceTransformerEmbedder
    from seatrial.judge._static import StaticEmbedder
    from seatrial.judge._stats import (
        AgreementReport,
        CategoryAgreement,
        ConfusionMatrix,
        KappaInterval,
        agreement_report,
        bootstrap_kappa_interval,
        cohen_kappa,
    )
    from seatrial.judge._types import (
        Calibration,
        JudgeError,
        JudgeInput,
        JudgeSample,
        JudgeVerdict,
    )

_EXPORTS = {
    "AgreementReport": "seatrial.judge._stats",
    "CACHE": "seatrial.judge._embedding",
    "Calibration": "seatrial.judge._types",
    "CategoryAgreement": "seatrial.judge._stats",
    "Claim": "seatrial.judge._factuality",
    "ClaimList": "seatrial.judge._factuality",
    "ConfusionMatrix": "seatrial.judge._stats",
    "Embedder": "seatrial.judge._embedding",
    "EmbeddingCache": "seatrial.judge._embedding",
    "GatewayEmbedder": "seatrial.judge._gateway_embedder",
    "HumanLabel": "seatrial.judge._labels",
    "Judge": "seatrial.judge._llm",
    "JudgeError": "seatrial.judge._types",
    "JudgeInput": "seatrial.judge._types",
    "JudgeSample": "seatrial.judge._types",
    "JudgeVerdict": "seatrial.judge._types",
    "Judgement": "seatrial.judge._labels",
    "KappaInterval": "seatrial.judge._stats",
    "LabelSet": "seatrial.judge._labels",
    "MissingExtra": "seatrial.judge._semantic",
    "MissingModel": "seatrial.judge._multilingual",
    "MULTILINGUAL_MODEL": "seatrial.judge._embedding",
    "PredictionSet": "seatrial.judge._labels",
    "PromptTemplate": "seatrial.judge._prompt",
    "SEMANTIC_MODEL": "seatrial.judge._embedding",
    "STATIC_MODEL": "seatrial.judge._embedding",
    "SentenceTransformerEmbedder": "seatrial.judge._semantic",
    "StaticEmbedder": "seatrial.judge._static",
    "UnembeddableText": "seatrial.judge._embedding",
    "UnknownEmbeddingModel": "seatrial.judge._embedding",
    "agreement_report": "seatrial.judge._stats",
    "available_versions": "seatrial.judge._prompt",
    "bootstrap_kappa_interval": "seatrial.judge._stats",
    "cohen_kappa": "seatrial.judge._stats",
    "default_model": "seatrial.judge._embedding",
    "default_threshold": "seatrial.judge._embedding",
    "E5Embedder": "seatrial.judge._multilingual",
    "embedder_for": "seatrial.judge._embedding",
    "load_labels": "seatrial.judge._labels",
    "load_predictions": "seatrial.judge._labels",
    "load_prompt": "seatrial.judge._prompt",
    "match_judgements": "seatrial.judge._labels",
    "model_family": "seatrial.judge._llm",
    "parse_json_object": "seatrial.judge._llm",
    "similarities": "seatrial.judge._embedding",
    "similarity": "seatrial.judge._embedding",
    "supported_share": "seatrial.judge._factuality",
    "use_embedders": "seatrial.judge._embedding",
    "use_gateway_embeddings": "seatrial.judge._gateway_embedder",
}

__all__ = [
    "CACHE",
    "MULTILINGUAL_MODEL",
    "SEMANTIC_MODEL",
    "STATIC_MODEL",
    "AgreementReport",
    "Calibration",
    "CategoryAgreement",
    "Claim",
    "ClaimList",
    "ConfusionMatrix",
    "E5Embedder",
    "Embedder",
    "EmbeddingCache",
    "GatewayEmbedder",
    "HumanLabel",
    "Judge",
    "JudgeError",
    "JudgeInput",
    "JudgeSample",
    "JudgeVerdict",
    "Judgement",
    "KappaInterval",
    "LabelSet",
    "MissingExtra",
    "MissingModel",
    "PredictionSet",
    "PromptTemplate",
    "SentenceTransformerEmbedder",
    "StaticEmbedder",
    "UnembeddableText",
    "UnknownEmbeddingModel",
    "agreement_report",
    "available_versions",
    "bootstrap_kappa_interval",
    "cohen_kappa",
    "default_model",
    "default_threshold",
    "embedder_for",
    "load_labels",
    "load_predictions",
    "load_prompt",
    "match_judgements",
    "model_family",
    "parse_json_object",
    "similarities",
    "similarity",
    "supported_share",
    "use_embedders",
    "use_gateway_embeddings",
]


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'seatrial.judge' has no attribute {name!r}")
