"""Judging replies by meaning: embeddings for ``similar``, the LLM judge, and its agreement
with human labels.

The judge owns everything about itself: its settings (``judge:`` of ``seatrial.yaml``), the
calibration policy that decides whether its FAIL may fail a run, and the handle an attempt's
L3 checks call. Its calibrations are stored records, defined by :mod:`seatrial.store`.

Names are imported on first use: the bundled model loads only when a check needs it.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from seatrial.judge._calibrate import (
        LabelledItems,
        calibrate,
        queue_items,
        read_labelled_items,
    )
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
    from seatrial.judge._handle import AttemptJudge, JudgeHandle, agent_models
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
    from seatrial.judge._settings import JudgeSettings
    from seatrial.judge._static import StaticEmbedder
    from seatrial.judge._stats import (
        AgreementReport,
        CategoryAgreement,
        ConfusionMatrix,
        KappaInterval,
        PositionalFigures,
        agreement_report,
        bootstrap_kappa_interval,
        cohen_kappa,
    )
    from seatrial.judge._trust import (
        JudgeTrust,
        calibration_alarm,
        judge_trust,
        meets_bar,
        trust_of,
    )
    from seatrial.judge._types import JudgeError, JudgeInput, JudgeSample, JudgeVerdict
    from seatrial.store import Calibration

_EXPORTS = {
    "CACHE": "seatrial.judge._embedding",
    "MULTILINGUAL_MODEL": "seatrial.judge._embedding",
    "SEMANTIC_MODEL": "seatrial.judge._embedding",
    "STATIC_MODEL": "seatrial.judge._embedding",
    "AgreementReport": "seatrial.judge._stats",
    "AttemptJudge": "seatrial.judge._handle",
    "Calibration": "seatrial.store",
    "CategoryAgreement": "seatrial.judge._stats",
    "Claim": "seatrial.judge._factuality",
    "ClaimList": "seatrial.judge._factuality",
    "ConfusionMatrix": "seatrial.judge._stats",
    "E5Embedder": "seatrial.judge._multilingual",
    "Embedder": "seatrial.judge._embedding",
    "EmbeddingCache": "seatrial.judge._embedding",
    "GatewayEmbedder": "seatrial.judge._gateway_embedder",
    "HumanLabel": "seatrial.judge._labels",
    "Judge": "seatrial.judge._llm",
    "JudgeError": "seatrial.judge._types",
    "JudgeHandle": "seatrial.judge._handle",
    "JudgeInput": "seatrial.judge._types",
    "JudgeSample": "seatrial.judge._types",
    "JudgeSettings": "seatrial.judge._settings",
    "JudgeTrust": "seatrial.judge._trust",
    "JudgeVerdict": "seatrial.judge._types",
    "Judgement": "seatrial.judge._labels",
    "KappaInterval": "seatrial.judge._stats",
    "LabelSet": "seatrial.judge._labels",
    "LabelledItems": "seatrial.judge._calibrate",
    "MissingExtra": "seatrial.judge._semantic",
    "MissingModel": "seatrial.judge._multilingual",
    "PositionalFigures": "seatrial.judge._stats",
    "PredictionSet": "seatrial.judge._labels",
    "PromptTemplate": "seatrial.judge._prompt",
    "SentenceTransformerEmbedder": "seatrial.judge._semantic",
    "StaticEmbedder": "seatrial.judge._static",
    "UnembeddableText": "seatrial.judge._embedding",
    "UnknownEmbeddingModel": "seatrial.judge._embedding",
    "agent_models": "seatrial.judge._handle",
    "agreement_report": "seatrial.judge._stats",
    "available_versions": "seatrial.judge._prompt",
    "bootstrap_kappa_interval": "seatrial.judge._stats",
    "calibrate": "seatrial.judge._calibrate",
    "calibration_alarm": "seatrial.judge._trust",
    "cohen_kappa": "seatrial.judge._stats",
    "default_model": "seatrial.judge._embedding",
    "default_threshold": "seatrial.judge._embedding",
    "embedder_for": "seatrial.judge._embedding",
    "judge_trust": "seatrial.judge._trust",
    "load_labels": "seatrial.judge._labels",
    "load_predictions": "seatrial.judge._labels",
    "load_prompt": "seatrial.judge._prompt",
    "match_judgements": "seatrial.judge._labels",
    "meets_bar": "seatrial.judge._trust",
    "model_family": "seatrial.judge._llm",
    "parse_json_object": "seatrial.judge._llm",
    "queue_items": "seatrial.judge._calibrate",
    "read_labelled_items": "seatrial.judge._calibrate",
    "similarities": "seatrial.judge._embedding",
    "similarity": "seatrial.judge._embedding",
    "supported_share": "seatrial.judge._factuality",
    "trust_of": "seatrial.judge._trust",
    "use_embedders": "seatrial.judge._embedding",
    "use_gateway_embeddings": "seatrial.judge._gateway_embedder",
}

__all__ = [
    "CACHE",
    "MULTILINGUAL_MODEL",
    "SEMANTIC_MODEL",
    "STATIC_MODEL",
    "AgreementReport",
    "AttemptJudge",
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
    "JudgeHandle",
    "JudgeInput",
    "JudgeSample",
    "JudgeSettings",
    "JudgeTrust",
    "JudgeVerdict",
    "Judgement",
    "KappaInterval",
    "LabelSet",
    "LabelledItems",
    "MissingExtra",
    "MissingModel",
    "PositionalFigures",
    "PredictionSet",
    "PromptTemplate",
    "SentenceTransformerEmbedder",
    "StaticEmbedder",
    "UnembeddableText",
    "UnknownEmbeddingModel",
    "agent_models",
    "agreement_report",
    "available_versions",
    "bootstrap_kappa_interval",
    "calibrate",
    "calibration_alarm",
    "cohen_kappa",
    "default_model",
    "default_threshold",
    "embedder_for",
    "judge_trust",
    "load_labels",
    "load_predictions",
    "load_prompt",
    "match_judgements",
    "meets_bar",
    "model_family",
    "parse_json_object",
    "queue_items",
    "read_labelled_items",
    "similarities",
    "similarity",
    "supported_share",
    "trust_of",
    "use_embedders",
    "use_gateway_embeddings",
]


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'seatrial.judge' has no attribute {name!r}")
