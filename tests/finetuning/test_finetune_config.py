"""Fine-tuning recipes and the paper's per-size values."""

from pathlib import Path

import pytest

from electra_tf.config import ConfigError
from electra_tf.tasks.config import FinetuneConfig, load_finetune_recipe


def test_recipes_and_paper_values():
    config = load_finetune_recipe("rte")
    assert config.epochs == 10 and config.task == "rte"
    small = FinetuneConfig(defaults="paper").resolved(hidden_dim=256, task_epochs=3)
    large = FinetuneConfig(defaults="paper").resolved(hidden_dim=1024, task_epochs=3)
    assert (small.learning_rate, small.layerwise_decay, small.epochs) == (3e-4, 0.8, 3)
    assert (large.learning_rate, large.layerwise_decay) == (5e-5, 0.9)
    assert FinetuneConfig().resolved(768, 3).learning_rate == 1e-4
    assert FinetuneConfig().resolved(128, 3).learning_rate == 1e-3  # tiny, not in the paper
    assert FinetuneConfig().override("learning_rate=2e-5", "seeds=3").seeds == 3
    with pytest.raises(ConfigError, match="has no field 'learning_rat'"):
        FinetuneConfig().override("learning_rat=1")


RESOLVED = (
    "learning_rate", "layerwise_decay", "group_by_length", "warmup_fraction", "adam_epsilon"
)  # fmt: skip


def _resolved(config, hidden_dim=256):
    resolved = config.resolved(hidden_dim, task_epochs=3)
    return tuple(getattr(resolved, name) for name in RESOLVED)


def test_unset_settings_come_from_the_chosen_defaults():
    # standard (transformers' example scripts): no layer-wise decay, random batches,
    # no warmup, epsilon 1e-8; the learning rate stays the paper's per size in both.
    assert _resolved(FinetuneConfig()) == (3e-4, 1.0, False, 0.0, 1e-8)
    assert _resolved(FinetuneConfig(defaults="paper")) == (3e-4, 0.8, True, 0.1, 1e-6)
    assert _resolved(FinetuneConfig(defaults="paper"), 1024) == (5e-5, 0.9, True, 0.1, 1e-6)
    # A setting given is kept, whichever recipe fills the rest (0 warmup is a value, not unset).
    given = FinetuneConfig(defaults="paper").override(
        "group_by_length=false", "warmup_fraction=0", "adam_epsilon=1e-7", "learning_rate=5e-5"
    )
    assert _resolved(given) == (5e-5, 0.8, False, 0.0, 1e-7)
    assert _resolved(FinetuneConfig().override("layerwise_decay=0.7", "group_by_length=1")) == (
        3e-4, 0.7, True, 0.0, 1e-8
    )  # fmt: skip
    with pytest.raises(ConfigError, match='defaults must be "standard" or "paper", got .papr'):
        FinetuneConfig().override("defaults=papr")


def test_defaults_flag_round_trip():
    from electra_tf.cli import build_parser
    from electra_tf.cli.finetune import _overrides

    parser = build_parser()
    argv = ["finetune", "--init", "x", "--train", "t.csv", "--defaults", "paper"]
    config = FinetuneConfig().override(*_overrides(parser.parse_args(argv)))
    assert config.defaults == "paper" and _resolved(config)[1:] == (0.8, True, 0.1, 1e-6)
    plain = FinetuneConfig().override(*_overrides(parser.parse_args(argv[:5])))
    assert plain == FinetuneConfig() and plain.defaults == "standard"


def test_paper_tasks_keep_the_paper_recipe():
    # Read from this checkout's recipes/ (the installed `electra_tf.recipes` may be another's).
    folder = Path(__file__).resolve().parents[2] / "recipes" / "finetune"
    paper = ("cola", "sst2", "mrpc", "stsb", "qqp", "mnli", "qnli", "rte", "squad1", "squad2")
    paper += ("movie_reviews", "movie_ratings")  # the recorded experiments' probe tasks
    for name in paper:
        config = load_finetune_recipe(str(folder / f"{name}.toml"))
        assert config.defaults == "paper", name
        assert _resolved(config, 768)[1:] == (0.8, True, 0.1, 1e-6), name


def test_a_run_recorded_before_the_defaults_choice_resumes_with_the_paper_defaults(tmp_path):
    import dataclasses
    import json

    from electra_tf.finetuning.request import check_request

    def request(config):
        settings = dataclasses.asdict(config.resolved(384, 3))
        return {"task": "mine", "config": {k: v for k, v in settings.items() if k != "seeds"}}

    old = request(FinetuneConfig(defaults="paper"))  # what an older version recorded:
    del old["config"]["defaults"]  # the paper's values, and no `defaults`
    assert old["config"]["layerwise_decay"] == 0.8 and old["config"]["group_by_length"]
    (tmp_path / "request.json").write_text(json.dumps({**old, "digest": "older-version"}))
    (tmp_path / "seeds").mkdir()
    (tmp_path / "seeds" / "work").write_text("a finished epoch")
    with pytest.raises(
        ConfigError,
        match=r"its config differ\) \(a run started before the "
        r"standard defaults resumes with --defaults paper\); choose another",
    ):
        check_request(tmp_path, request(FinetuneConfig()))
    check_request(tmp_path, request(FinetuneConfig(defaults="paper")))  # resumes
    assert json.loads((tmp_path / "request.json").read_text())["digest"] == "older-version"


def test_runs_recorded_before_the_standard_qa_head_resume(tmp_path):
    """The standard defaults' QA head changed (2026-11-29): a run recorded before it with the
    reference's head resumes unchanged when it is not question answering (those settings
    change nothing there); a question-answering one is told the flags that resume it."""
    import dataclasses
    import json

    from electra_tf.finetuning.request import check_request

    def request(config, kind, drop=False):
        settings = dataclasses.asdict(config.resolved(384, 3))
        settings = {k: v for k, v in settings.items() if k != "seeds"}
        if drop:  # as the older version recorded: the reference's head, no span_head_init
            settings.update(answerable_loss_weight=1.0, no_answer="answerability")
            del settings["span_head_init"]
        return {"task": "mine", "kind": kind, "config": settings}

    for kind in ("text_classification", "question_answering"):
        folder = tmp_path / kind
        (folder / "seeds").mkdir(parents=True)
        (folder / "seeds" / "work").write_text("a finished epoch")
        old = request(FinetuneConfig(), kind, drop=True)
        (folder / "request.json").write_text(json.dumps({**old, "digest": "older-version"}))
        if kind == "question_answering":
            with pytest.raises(ConfigError, match=r"its config differ\) \(a question-answering "
                               r"run .* resumes with --answerable-loss-weight 1 --no-answer "
                               r"answerability\); choose another"):  # fmt: skip
                check_request(folder, request(FinetuneConfig(), kind))
            asked = FinetuneConfig(answerable_loss_weight=1.0, no_answer="answerability")
            check_request(folder, request(asked, kind))  # resumes with the flags
        else:
            check_request(folder, request(FinetuneConfig(), kind))  # resumes as it is
        assert json.loads((folder / "request.json").read_text())["digest"] == "older-version"
